package toolsearch_test

import (
	"fmt"

	"github.com/mcpadapter/mcpadapter/toolsearch"
)

// An index of a few tools, and the best matches for what a model asks.
// mcpadapter.Options.ToolSearch builds one from the servers' listings.
func Example() {
	ix := toolsearch.New([]toolsearch.Doc{
		{ID: "github_create_issue", Name: "create_issue", Description: "Open a new issue in a repository",
			Args: []toolsearch.Arg{{Name: "title"}, {Name: "body"}}},
		{ID: "github_close_issue", Name: "close_issue", Description: "Close an issue"},
		{ID: "calendar_create_event", Name: "createEvent", Description: "Schedule a meeting on the calendar"},
		{ID: "weather_forecast", Name: "forecast", Description: "Weather forecast for a city"},
	})
	for _, h := range ix.Search("schedule a meeting", 1) {
		fmt.Println(h.ID)
	}
	for _, h := range ix.Search("open an issue", 1) {
		fmt.Println(h.ID)
	}
	// Output:
	// calendar_create_event
	// github_create_issue
}
