package mcpadapter

import (
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/truncate"
)

// DefaultMaxResultBytes is how much of a tool result's text reaches a
// model when neither Options.MaxResultBytes nor the tool's own limit
// (ToolTransform.MaxResultBytes, a config file's per-tool
// "maxResultBytes") says otherwise: 100,000 bytes, about 25,000 tokens
// by the estimate of BytesPerToken.
const DefaultMaxResultBytes = 100_000

// BytesPerToken is the estimate used to turn a token budget into bytes:
// about 4 bytes of English text or JSON per token for the tokenizers of
// current models (fewer for other scripts, so a budget set this way is
// generous for them). TokenBudget(n) is n*BytesPerToken.
const BytesPerToken = 4

// TokenBudget returns a byte limit for about n tokens (n*BytesPerToken),
// for Options.MaxResultBytes and ToolTransform.MaxResultBytes.
func TokenBudget(n int) int { return n * BytesPerToken }

// minResultLimit is the smallest limit accepted: room for the note and
// some text.
const minResultLimit = truncate.MinLimit

// TextLimit returns the limit the result's Text and ModelContent keep to:
// the byte limit of the tool that produced it (0 means none).
func (r *Result) TextLimit() int { return r.limit }

// SetTextLimit sets the limit Text and ModelContent keep to; n <= 0 means
// none. Tool.Call sets it from Options.MaxResultBytes and the tool's own
// limit.
func (r *Result) SetTextLimit(n int) { r.limit = max(n, 0) }

// FullText is Text without the limit: the whole result as text, for the
// application (Content and Artifact are never cut either).
func (r *Result) FullText() string {
	return r.render()
}

// Truncated reports whether Text cuts the result, with the bytes of
// text it shows and the bytes there are in all.
func (r *Result) Truncated() (shown, total int, truncated bool) {
	full := r.render()
	_, shown, truncated = truncate.Text(full, r.limit)
	return shown, len(full), truncated
}

// ModelContent returns the content blocks to show a model: Content
// itself when its text fits TextLimit, else the blocks cut so that their
// text (as Text renders each) stays within it, with a last text block
// that says how much was left out. Images and audio count as their
// description ("[image image/png, N bytes]"); a block past the limit is
// left out. Bindings that send blocks read this; Content stays whole.
func (r *Result) ModelContent() []Content {
	if r.limit <= 0 {
		return r.Content
	}
	full := len(r.render())
	if full <= r.limit {
		return r.Content
	}
	note := len(truncate.Note(full, full))
	budget := r.limit - note
	if budget < 0 {
		budget = 0
	}
	out := make([]Content, 0, len(r.Content)+1)
	shown := 0
	for i, c := range r.Content {
		n := len(blockText(c))
		if i > 0 {
			n++ // the line break between blocks
		}
		if shown+n <= budget {
			out = append(out, c)
			shown += n
			continue
		}
		if t, ok := c.(*TextContent); ok && budget-shown > 1 {
			cut := &TextContent{Text: truncate.UTF8(t.Text, budget-shown-min(i, 1)), Annotations: t.Annotations}
			out = append(out, cut)
			shown += len(cut.Text) + min(i, 1)
		}
		break
	}
	if note <= r.limit {
		out = append(out, &TextContent{Text: strings.TrimPrefix(truncate.Note(shown, full), "\n")})
	}
	return out
}

// blockText is the text Text renders for one block.
func blockText(c Content) string {
	return (&Result{Content: []Content{c}}).render()
}
