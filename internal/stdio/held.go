package stdio

import (
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// heldRequests are the requests from the server that the client is
// answering: each is added when Read passes it up and removed when its
// answer has been written (or failed to be). go-sdk answers every request
// on a goroutine of its own, which lives until the answer is written; a
// server that sends requests and does not read the answers would make the
// client hold them without end (200,000 pings made 198,561 goroutines and
// 1.14 GiB before this bound).
type heldRequests struct {
	mu  sync.Mutex
	ids map[jsonrpc.ID]struct{}
}

// add holds the request id and returns how many are held. A duplicate id
// is not held twice: go-sdk rejects it with an answer that has no id.
func (h *heldRequests) add(id jsonrpc.ID) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ids == nil {
		h.ids = make(map[jsonrpc.ID]struct{})
	}
	h.ids[id] = struct{}{}
	return len(h.ids)
}

// answered lets the request id go.
func (h *heldRequests) answered(id jsonrpc.ID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.ids, id)
}
