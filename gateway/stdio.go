package gateway

import (
	"context"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves one client over in and out (a desktop host that
// starts the gateway as its only server: os.Stdin and os.Stdout) until the
// client closes in or ctx ends. The gateway must have been started.
func (g *Gateway) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	t := liftingTransport{Transport: &mcp.IOTransport{Reader: in, Writer: out}}
	if g.opts.Telemetry != nil {
		t.ids = &g.stdioIDs
	}
	ss, err := g.server.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err := <-done:
		return ignoreClosed(err)
	case <-ctx.Done():
		_ = ss.Close()
		<-done
		return nil
	}
}

func ignoreClosed(err error) error {
	if err == nil || err == io.EOF {
		return nil
	}
	return err
}
