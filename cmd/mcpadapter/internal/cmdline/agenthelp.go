package cmdline

// The agent command's help, shown by "mcpadapter agent --help" whether or
// not the agent program (mcpadapter-agent) is installed.
const (
	// AgentUse is the agent command's usage line, after its name.
	AgentUse = "[TARGET | -- COMMAND ARGS...] --model NAME"
	// AgentShort is the agent command's one-line description.
	AgentShort = "Chat with an LLM agent that uses the servers' tools"
	// AgentLong is the agent command's description.
	AgentLong = `Run an agent (eino ADK) with an OpenAI-compatible chat model (OpenAI, vLLM, Ollama, LiteLLM,
... through --base-url) and the tools of the target or config. The answer streams as it is
written; each tool call and its result are shown as they happen. When a server asks a question
mid-call (elicitation), you answer it here and the run resumes.

Type a message and press Enter; an empty line or EOF (Ctrl-D) ends the session. --once runs one
question and exits, for scripts. The API key comes from --api-key or $OPENAI_API_KEY; with none,
requests go without an Authorization header (servers on this machine, such as Ollama, need none),
and for a server elsewhere the agent says so before the first request. A refused key, an unknown
model or a server that does not answer is reported in one plain line (--verbose shows the rest).

--search gives the model two tools, search_tools and call_tool, instead of every tool's definition
(for large catalogs: it finds a tool by what it does, then calls it). --watch follows the servers'
tool lists while the agent runs: a tool a server adds (notifications/tools/list_changed) is given
to the model at its next request, and a removed one answers that it is gone.`
	// AgentExample is the agent command's examples.
	AgentExample = `  mcpadapter agent --model gpt-4o-mini
  mcpadapter agent --model llama3.1 --base-url http://127.0.0.1:11434/v1 --once "What is 2+3?"
  mcpadapter agent --config .mcp.json --model gpt-4o
  mcpadapter agent --config .mcp.json --model gpt-4o --search --watch`
)
