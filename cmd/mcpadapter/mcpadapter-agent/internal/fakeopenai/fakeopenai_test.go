package fakeopenai

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cloudwego/eino-ext/components/model/openai"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
)

var weatherTool = &schema.ToolInfo{
	Name: "get_weather",
	Desc: "Get the weather for a city.",
	ParamsOneOf: schema.NewParamsOneOfByParams(map[string]*schema.ParameterInfo{
		"city": {Type: schema.String, Desc: "City name", Required: true},
		"unit": {Type: schema.String, Enum: []string{"c", "f"}},
	}),
}

func newModel(t *testing.T, s *Server) model.ToolCallingChatModel {
	t.Helper()
	ctx := context.Background()
	cm, err := openai.NewChatModel(ctx, &openai.ChatModelConfig{
		APIKey:  "test-key",
		BaseURL: s.URL,
		Model:   "gpt-test",
	})
	if err != nil {
		t.Fatalf("NewChatModel: %v", err)
	}
	m, err := cm.WithTools([]*schema.ToolInfo{weatherTool})
	if err != nil {
		t.Fatalf("WithTools: %v", err)
	}
	return m
}

func streamAll(t *testing.T, m model.ToolCallingChatModel, in []*schema.Message) (*schema.Message, int) {
	t.Helper()
	sr, err := m.Stream(context.Background(), in)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer sr.Close()
	var parts []*schema.Message
	for {
		msg, err := sr.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		parts = append(parts, msg)
	}
	msg, err := schema.ConcatMessages(parts)
	if err != nil {
		t.Fatalf("ConcatMessages: %v", err)
	}
	return msg, len(parts)
}

func assertJSONEqual(t *testing.T, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: %q is not JSON: %v", what, got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: want %q is not JSON: %v", what, want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("%s = %s, want %s", what, gb, wb)
	}
}

// checkToolRound checks the request that carried the tool result back.
func checkToolRound(t *testing.T, req Request, wantStream bool) {
	t.Helper()
	if req.Stream != wantStream {
		t.Errorf("Stream = %v, want %v", req.Stream, wantStream)
	}
	if req.Authorization != "Bearer test-key" {
		t.Errorf("Authorization = %q", req.Authorization)
	}
	if req.Model != "gpt-test" {
		t.Errorf("Model = %q", req.Model)
	}
	if len(req.Messages) != 3 {
		t.Fatalf("got %d messages, want 3: %+v", len(req.Messages), req.Messages)
	}
	asst, tool := req.Messages[1], req.Messages[2]
	if asst.Role != "assistant" || len(asst.ToolCalls) != 1 || asst.ToolCalls[0].ID != "call_abc" ||
		asst.ToolCalls[0].Name != "get_weather" {
		t.Errorf("assistant message = %+v", asst)
	}
	if tool.Role != "tool" || tool.ToolCallID != "call_abc" || tool.Content != `{"temp":21}` {
		t.Errorf("tool message = %+v", tool)
	}
}

func conversation(call schema.ToolCall) []*schema.Message {
	return []*schema.Message{
		schema.UserMessage("What's the weather in Paris?"),
		schema.AssistantMessage("", []schema.ToolCall{call}),
		schema.ToolMessage(`{"temp":21}`, call.ID),
	}
}

func TestGenerate(t *testing.T) {
	s := Start(t,
		Turn{ToolCalls: []ToolCall{{ID: "call_abc", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		Turn{Content: "It is 21 degrees in Paris."},
	)
	m := newModel(t, s)
	ctx := context.Background()

	first, err := m.Generate(ctx, []*schema.Message{schema.UserMessage("What's the weather in Paris?")})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if len(first.ToolCalls) != 1 {
		t.Fatalf("tool calls = %+v, want 1", first.ToolCalls)
	}
	call := first.ToolCalls[0]
	if call.ID != "call_abc" || call.Function.Name != "get_weather" || call.Type != "function" {
		t.Errorf("tool call = %+v", call)
	}
	assertJSONEqual(t, "arguments", call.Function.Arguments, `{"city":"Paris"}`)
	if first.ResponseMeta == nil || first.ResponseMeta.FinishReason != "tool_calls" {
		t.Errorf("response meta = %+v", first.ResponseMeta)
	}
	if first.ResponseMeta != nil && (first.ResponseMeta.Usage == nil || first.ResponseMeta.Usage.TotalTokens == 0) {
		t.Errorf("usage = %+v", first.ResponseMeta.Usage)
	}

	second, err := m.Generate(ctx, conversation(call))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if second.Content != "It is 21 degrees in Paris." || len(second.ToolCalls) != 0 {
		t.Errorf("second reply = %+v", second)
	}
	if second.ResponseMeta == nil || second.ResponseMeta.FinishReason != "stop" {
		t.Errorf("response meta = %+v", second.ResponseMeta)
	}

	third, err := m.Generate(ctx, []*schema.Message{schema.UserMessage("more")})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if third.Content != EndedContent {
		t.Errorf("after the script: %q, want %q", third.Content, EndedContent)
	}

	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("got %d requests, want 3", len(reqs))
	}
	r0 := reqs[0]
	if r0.Stream || r0.Authorization != "Bearer test-key" || r0.Model != "gpt-test" {
		t.Errorf("first request = stream %v, auth %q, model %q", r0.Stream, r0.Authorization, r0.Model)
	}
	if len(r0.Messages) != 1 || r0.Messages[0].Role != "user" || r0.Messages[0].Content != "What's the weather in Paris?" {
		t.Errorf("first request messages = %+v", r0.Messages)
	}
	if len(r0.Tools) != 1 || r0.Tools[0].Name != "get_weather" || r0.Tools[0].Description != "Get the weather for a city." {
		t.Fatalf("tools = %+v", r0.Tools)
	}
	assertJSONEqual(t, "tool parameters", string(r0.Tools[0].Parameters),
		`{"type":"object","properties":{"city":{"type":"string","description":"City name"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}`)
	if !json.Valid(r0.Raw) {
		t.Errorf("Raw is not JSON: %s", r0.Raw)
	}
	checkToolRound(t, reqs[1], false)
	t.Logf("first request as sent by eino-ext: %s", r0.Raw)
}

func TestStream(t *testing.T) {
	s := Start(t,
		Turn{ToolCalls: []ToolCall{{ID: "call_abc", Name: "get_weather", Arguments: `{"city":"Paris","unit":"c"}`}}},
		Turn{Content: "It is 21 degrees in Paris, héhé."},
	)
	m := newModel(t, s)

	first, _ := streamAll(t, m, []*schema.Message{schema.UserMessage("What's the weather in Paris?")})
	if len(first.ToolCalls) != 1 {
		t.Fatalf("tool calls = %+v, want 1", first.ToolCalls)
	}
	call := first.ToolCalls[0]
	if call.ID != "call_abc" || call.Function.Name != "get_weather" || call.Type != "function" {
		t.Errorf("tool call = %+v", call)
	}
	assertJSONEqual(t, "arguments", call.Function.Arguments, `{"city":"Paris","unit":"c"}`)
	if first.ResponseMeta == nil || first.ResponseMeta.FinishReason != "tool_calls" {
		t.Errorf("response meta = %+v", first.ResponseMeta)
	}

	second, n := streamAll(t, m, conversation(call))
	if second.Content != "It is 21 degrees in Paris, héhé." || len(second.ToolCalls) != 0 {
		t.Errorf("second reply = %+v", second)
	}
	if n < 3 {
		t.Errorf("content came in %d messages, want at least 3", n)
	}
	if second.ResponseMeta == nil || second.ResponseMeta.FinishReason != "stop" {
		t.Errorf("response meta = %+v", second.ResponseMeta)
	}
	if second.ResponseMeta != nil && (second.ResponseMeta.Usage == nil || second.ResponseMeta.Usage.TotalTokens == 0) {
		t.Errorf("usage = %+v", second.ResponseMeta.Usage)
	}

	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("got %d requests, want 2", len(reqs))
	}
	if !reqs[0].Stream || len(reqs[0].Tools) != 1 || len(reqs[0].Tools[0].Parameters) == 0 {
		t.Errorf("first request = %+v", reqs[0])
	}
	checkToolRound(t, reqs[1], true)
	t.Logf("streaming request as sent by eino-ext: %s", reqs[1].Raw)
}

func TestSetReply(t *testing.T) {
	s := Start(t, Turn{Content: "unused"})
	s.SetReply(func(req Request) Turn {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			return Turn{Content: "got " + last.Content + " for " + last.ToolCallID}
		}
		return Turn{ToolCalls: []ToolCall{{Name: "get_weather"}}}
	})
	m := newModel(t, s)
	ctx := context.Background()

	first, err := m.Generate(ctx, []*schema.Message{schema.UserMessage("hi")})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if len(first.ToolCalls) != 1 || first.ToolCalls[0].ID == "" || first.ToolCalls[0].Function.Arguments != "{}" {
		t.Fatalf("tool calls = %+v, want one with a generated ID and {} arguments", first.ToolCalls)
	}
	id := first.ToolCalls[0].ID
	second, _ := streamAll(t, m, []*schema.Message{
		schema.UserMessage("hi"), first, schema.ToolMessage("sunny", id),
	})
	if want := "got sunny for " + id; second.Content != want {
		t.Errorf("content = %q, want %q", second.Content, want)
	}
}

// TestWire checks the raw wire format, as another client (or a CLI in
// another process) sees it.
func TestWire(t *testing.T) {
	s := Start(t, Turn{Content: "abcdef", ToolCalls: []ToolCall{{ID: "call_1", Name: "f", Arguments: `{"a":1}`}}})

	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},
		"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`
	base := strings.TrimSuffix(s.URL, "/v1")
	resp, err := http.Post(base+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 || lines[len(lines)-1] != "data: [DONE]" {
		t.Fatalf("stream did not end in [DONE]: %q", lines)
	}
	type chunk struct {
		Object  string `json:"object"`
		Choices []struct {
			Delta struct {
				Role      string `json:"role"`
				Content   string `json:"content"`
				ToolCalls []struct {
					Index    *int   `json:"index"`
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage *wireUsage `json:"usage"`
	}
	var chunks []chunk
	for _, line := range lines[:len(lines)-1] {
		var c chunk
		if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c); err != nil {
			t.Fatalf("bad chunk %q: %v", line, err)
		}
		if c.Object != "chat.completion.chunk" {
			t.Errorf("object = %q", c.Object)
		}
		chunks = append(chunks, c)
	}
	// role, 3 content, tool head, 2 argument pieces, finish, usage.
	if len(chunks) != 9 {
		t.Fatalf("got %d chunks, want 9: %q", len(chunks), lines)
	}
	if chunks[0].Choices[0].Delta.Role != "assistant" {
		t.Errorf("first chunk has no role: %q", lines[0])
	}
	var content, args string
	for _, c := range chunks[1:4] {
		content += c.Choices[0].Delta.Content
	}
	head := chunks[4].Choices[0].Delta.ToolCalls[0]
	if head.Index == nil || *head.Index != 0 || head.ID != "call_1" || head.Type != "function" || head.Function.Name != "f" {
		t.Errorf("tool call head = %q", lines[4])
	}
	for _, c := range chunks[5:7] {
		tc := c.Choices[0].Delta.ToolCalls[0]
		if tc.Index == nil || *tc.Index != 0 || tc.ID != "" {
			t.Errorf("argument delta = %+v", tc)
		}
		args += tc.Function.Arguments
	}
	if content != "abcdef" || args != `{"a":1}` {
		t.Errorf("content %q, arguments %q", content, args)
	}
	if fr := chunks[7].Choices[0].FinishReason; fr == nil || *fr != "tool_calls" {
		t.Errorf("finish chunk = %q", lines[7])
	}
	if len(chunks[8].Choices) != 0 || chunks[8].Usage == nil || chunks[8].Usage.TotalTokens == 0 {
		t.Errorf("usage chunk = %q", lines[8])
	}
	if reqs := s.Requests(); len(reqs) != 1 || reqs[0].Messages[0].Content != "ab" || reqs[0].Authorization != "" {
		t.Errorf("requests = %+v", reqs)
	}

	// Errors are OpenAI-shaped.
	for _, tc := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/v1/chat/completions", "{", http.StatusBadRequest},
		{"GET", "/v1/chat/completions", "", http.StatusMethodNotAllowed},
		{"POST", "/v1/embeddings", "{}", http.StatusNotFound},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != tc.status || err != nil || e.Error.Message == "" {
			t.Errorf("%s %s: status %d, error %q (%v)", tc.method, tc.path, resp.StatusCode, e.Error.Message, err)
		}
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("bad requests were recorded: %d requests", n)
	}
}

// TestErrorTurn: a Turn with a Status is an HTTP error with OpenAI's error
// body, and is recorded like any request.
func TestErrorTurn(t *testing.T) {
	s := Start(t, Turn{Status: http.StatusUnauthorized, Error: "Incorrect API key provided.", Code: "invalid_api_key"}, Turn{Content: "ok"})
	resp, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Error struct{ Message, Type, Code string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 401 || body.Error.Message != "Incorrect API key provided." || body.Error.Code != "invalid_api_key" {
		t.Errorf("%d %+v", resp.StatusCode, body)
	}
	if _, err := newModel(t, s).Generate(context.Background(), []*schema.Message{schema.UserMessage("hi")}); err != nil {
		t.Errorf("the turn after the error: %v", err)
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("%d requests recorded", n)
	}
}
