package testserver

// TinyPNG is the 1×1 transparent PNG returned by the image tool.
var TinyPNG = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d,
	0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00,
	0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
	0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49,
	0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
}

// TinyWAV is the 44-byte WAV header (8 kHz, mono, 8-bit PCM, no samples)
// returned by the audio tool.
var TinyWAV = []byte{
	'R', 'I', 'F', 'F', 36, 0, 0, 0, 'W', 'A', 'V', 'E',
	'f', 'm', 't', ' ', 16, 0, 0, 0, 1, 0, 1, 0,
	0x40, 0x1f, 0, 0, 0x40, 0x1f, 0, 0, 1, 0, 8, 0,
	'd', 'a', 't', 'a', 0, 0, 0, 0,
}

// Blob is the content of the blob resource embedded by the embedded tool:
// the bytes 0 through 9.
var Blob = []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}

// SchemaInput is the exact input schema of the schema tool. It has a $ref, an
// anyOf with null, an integer bound that does not fit in a float64 or int64,
// and vendor extensions; tests use it to check that schemas pass through
// byte for byte.
const SchemaInput = `{"type":"object","properties":{"target":{"$ref":"#/$defs/Target"},"mode":{"anyOf":[{"type":"string","enum":["fast","slow"]},{"type":"null"}]},"limit":{"type":"integer","maximum":12345678901234567890}},"required":["target"],"$defs":{"Target":{"type":"object","properties":{"host":{"type":"string","x-format-hint":"hostname"}}}},"x-vendor":{"keep":true}}`

// Fixed values returned by the tools, exported for assertions.
const (
	// CrashMessage is what the crash tool writes to stderr in a process.
	CrashMessage = "fatal: crash requested"
	// CrashExitCode is the exit status of a process whose crash tool ran.
	CrashExitCode = 3
	// QuotaMessage is the text of the fail_structured result.
	QuotaMessage = "quota exceeded"
	// DocText is the text of the embedded text resource.
	DocText = "hello doc"
	// DocURI is the URI of the resource link and of the embedded text resource.
	DocURI = "test://doc/1"
	// BinURI is the URI of the embedded blob resource.
	BinURI = "test://bin/1"
	// PolluteBanner is the non-JSON line the mcptestserver -pollute flag
	// prints on stdout.
	PolluteBanner = "Server starting... (this banner is not JSON)"
	// DiscoverExitCode is the exit status of mcptestserver -exit-on-discover
	// when the first request is server/discover.
	DiscoverExitCode = 4
	// ManyToolsCount is the number of extra_NN tools added by Options.ManyTools.
	ManyToolsCount = 25
)

// PreciseStructured is the structured content of the precise tool, as the
// server writes it: members out of alphabetical order and integers that a
// float64 cannot hold, so that decoding it into Go maps and encoding it
// again changes its bytes.
const PreciseStructured = `{"z":1,"id":12345678901234567890,"a":9007199254740993}`

// HologramBlock is the content block of a type no MCP version defines that
// the hologram tool returns after its text block [HologramText].
const HologramBlock = `{"type":"hologram","frames":[{"n":12345678901234567890,"at":0.5}],"annotations":{"priority":0.25},"_meta":{"vendor":"test"}}`

// HologramText is the text block the hologram tool returns before
// [HologramBlock].
const HologramText = "a hologram follows"
