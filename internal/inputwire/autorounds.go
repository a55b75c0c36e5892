//lint:file-ignore SA1019 sampling and roots, deprecated in 2026-07-28, may still be asked for in a round, which we support

package inputwire

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mcpadapter/mcpadapter/internal/plaincall"
	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AutoRounds answers, with a client's own handlers, the rounds of a
// 2026-07-28 tools/call, prompts/get or resources/read whose server asks
// for input (plaincall.Round), and sends the request again with the
// answers and the server's request state, until the server answers it
// for good. It takes the place of go-sdk's multi-round-trip loop
// (ClientOptions.MultiRoundTrip, turned off), which answers the questions
// of any result that holds inputRequests: a task the server made shows
// its questions with it, and answering them by sending the tools/call
// again would run the tool twice.
//
// A round with no questions (the server sheds load) is sent again after
// ShedWait, at most MaxShed times in a row; at most MaxAutoRounds rounds
// of one request are answered. The questions of a round are answered one
// after another, in key order (Keys).
type AutoRounds struct {
	// Elicit answers an elicitation (see Elicit); nil: the client
	// answers none, as go-sdk's client without an elicitation handler.
	Elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	// Sampling answers a sampling request; nil: none (Fulfill).
	Sampling func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)
	// Roots are the client's roots.
	Roots []*mcp.Root
	// Log receives a panic of a handler, answered as an error.
	Log *slog.Logger
}

// Middleware is a's loop as go-sdk's sending middleware. Add it before
// the client's other sending middleware, so that they see the request
// once, with its final answer. Once the server has answered a round, the
// call's error is a *sdkerr.DeliveredError: the server has had the call,
// and a later round that fails unsent does not make it one to send again
// from the start.
func (a AutoRounds) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" && method != "prompts/get" && method != "resources/read" {
			return next(ctx, method, req)
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		if res, err = a.rounds(ctx, next, method, req, res); err != nil {
			return nil, &sdkerr.DeliveredError{Err: err}
		}
		return res, nil
	}
}

// rounds answers the rounds of req, whose first answer is res, until the
// server answers it for good.
func (a AutoRounds) rounds(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request, res mcp.Result) (mcp.Result, error) {
	shed, rounds := 0, 0
	for {
		reqs, state, ok := plaincall.Round(res)
		if !ok {
			return res, nil
		}
		if len(reqs) == 0 {
			if shed++; shed > MaxShed {
				return nil, fmt.Errorf("answering %s: the server kept asking to send it again (load shedding), %d times", method, MaxShed)
			}
			if err := Sleep(ctx, ShedWait(shed)); err != nil {
				return nil, fmt.Errorf("answering %s: waiting to send it again after the server shed load: %w", method, err)
			}
		} else {
			shed = 0
			if rounds++; rounds > MaxAutoRounds {
				return nil, fmt.Errorf("answering %s: the server asked for input in %d rounds without answering", method, MaxAutoRounds)
			}
		}
		answers := make(mcp.InputResponseMap, len(reqs))
		for _, k := range Keys(reqs) {
			resp, err := a.answer(ctx, req.GetSession(), k, reqs[k])
			if err != nil {
				return nil, fmt.Errorf("answering %s: the server's question %q: %w", method, k, err)
			}
			answers[k] = resp
		}
		var err error
		if req, err = again(req, answers, state); err != nil {
			return nil, err
		}
		if res, err = next(ctx, method, req); err != nil {
			return nil, err
		}
	}
}

// answer answers one question of a round, a panic of a handler as an
// error.
func (a AutoRounds) answer(ctx context.Context, session mcp.Session, key string, q mcp.InputRequest) (resp mcp.InputResponse, err error) {
	defer func() {
		if v := recover(); v != nil {
			log := a.Log
			if log == nil {
				log = slog.New(slog.DiscardHandler)
			}
			resp, err = nil, errHandlerPanicked(ctx, log, "a round's question", v)
		}
	}()
	cs, _ := session.(*mcp.ClientSession)
	// The handlers' requests are their own, not this one's
	// (wire.Untracked): one they make on cs waits for its notifications
	// like any program's (engine.Settle).
	ctx = wire.Untracked(ctx)
	if p, ok := q.(*mcp.ElicitParams); ok {
		return Elicit(ctx, a.Elicit, cs, key, p)
	}
	if q == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the question is null"}
	}
	return Fulfill(ctx, cs, q, a.Sampling, a.Roots)
}

// again is req with the answers of a round and the server's state.
func again(req mcp.Request, answers mcp.InputResponseMap, state string) (mcp.Request, error) {
	cs, ok := req.GetSession().(*mcp.ClientSession)
	if !ok {
		return nil, fmt.Errorf("answering a round: a request of %T, not of a client", req.GetSession())
	}
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParams:
		cp := *p
		cp.InputResponses, cp.RequestState = answers, state
		return &mcp.ClientRequest[*mcp.CallToolParams]{Session: cs, Params: &cp}, nil
	case *mcp.CallToolParamsRaw:
		cp := *p
		cp.InputResponses, cp.RequestState = answers, state
		return &mcp.ClientRequest[*mcp.CallToolParamsRaw]{Session: cs, Params: &cp}, nil
	case *mcp.GetPromptParams:
		cp := *p
		cp.InputResponses, cp.RequestState = answers, state
		return &mcp.ClientRequest[*mcp.GetPromptParams]{Session: cs, Params: &cp}, nil
	case *mcp.ReadResourceParams:
		cp := *p
		cp.InputResponses, cp.RequestState = answers, state
		return &mcp.ClientRequest[*mcp.ReadResourceParams]{Session: cs, Params: &cp}, nil
	}
	return nil, fmt.Errorf("answering a round: cannot send params of %T again", req.GetParams())
}
