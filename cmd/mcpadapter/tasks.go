package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/session"
	"github.com/spf13/cobra"
)

// tasksCommand lists, shows and cancels the MCP tasks of a server.
func tasksCommand(a *cmdline.App) *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tasks list|get|cancel [TARGET] [ID]",
		Short: "List, show or cancel a server's tasks (long-running tool calls)",
		Long: `A server may run a tool call as a task (MCP tasks): "mcpadapter call" follows it to its
result and prints its id on stderr. These commands look at tasks from outside the call:

  tasks list [TARGET]        the server's tasks (2025-11-25 servers; many keep them per session,
                             so a new connection may see none; 2026-07-28 has no tasks/list)
  tasks get TARGET ID        a task's status
  tasks cancel TARGET ID     ask the server to cancel a task

With a config of several servers, name one with --server.`,
		Example: `  mcpadapter tasks get https://example.com/mcp 786512e2-9e0d
  mcpadapter tasks cancel https://example.com/mcp 786512e2-9e0d
  mcpadapter tasks list --config .mcp.json --server research`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTasks(cmd, a, args, server, asJSON)
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the server's `name`, in a config of several")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func runTasks(cmd *cobra.Command, a *cmdline.App, args []string, server string, asJSON bool) error {
	op, rest := args[0], args[1:]
	var id string
	switch op {
	case "list":
		if len(rest) > 1 {
			return cmdline.Usagef("tasks list takes at most a TARGET (got %d arguments)", len(rest))
		}
	case "get", "cancel":
		if len(rest) != 2 {
			return cmdline.Usagef("tasks %s takes TARGET and ID (got %d arguments)", op, len(rest))
		}
		rest, id = rest[:1], rest[1]
	default:
		return cmdline.Usagef("unknown tasks command %q: want list, get or cancel", op)
	}
	s, err := a.Open(cmd.Context(), cmd, rest, cmdline.OpenOptions{})
	if err != nil {
		return err
	}
	defer s.Close()
	c, err := pickClient(s, server)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	var out any
	switch op {
	case "list":
		tasks, err := c.ListTasks(ctx)
		if err != nil {
			return err
		}
		if !asJSON {
			if len(tasks) == 0 {
				fmt.Fprintf(a.Stdout, "no tasks on %s\n", c.Name())
			}
			for _, t := range tasks {
				printTask(a, &t)
			}
			return nil
		}
		out = tasks
	case "get":
		t, err := c.GetTask(ctx, id)
		if err != nil {
			return err
		}
		out = t
		if !asJSON {
			printTask(a, t)
			return nil
		}
	case "cancel":
		t, err := c.CancelTask(ctx, id)
		if err != nil {
			return err
		}
		if !asJSON {
			if t == nil {
				fmt.Fprintf(a.Stdout, "%s: cancel acknowledged\n", id)
			} else {
				printTask(a, t)
			}
			return nil
		}
		out = t
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintln(a.Stdout, string(b))
	return nil
}

// pickClient returns the named server's client, or the only one.
func pickClient(s *session.Session, name string) (*mcpadapter.Client, error) {
	if name != "" {
		return s.Client(name)
	}
	clients := s.Clients()
	if len(clients) == 1 {
		return clients[0], nil
	}
	names := make([]string, len(clients))
	for i, c := range clients {
		names[i] = c.Name()
	}
	return nil, cmdline.Usagef("%d servers (%s): name one with --server", len(clients), strings.Join(names, ", "))
}

func printTask(a *cmdline.App, t *mcpadapter.Task) {
	line := t.TaskID + ": " + string(t.Status)
	if t.StatusMessage != "" {
		line += " (" + t.StatusMessage + ")"
	}
	if t.CreatedAt != "" {
		line += ", created " + t.CreatedAt
	}
	fmt.Fprintln(a.Stdout, line)
}
