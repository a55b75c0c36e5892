package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CatalogDomains names the servers [Catalog] builds: ten domains of a
// large tool catalog, [CatalogToolsPerDomain] tools each.
func CatalogDomains() []string {
	return []string{"github", "slack", "calendar", "files", "database", "weather", "payments", "email", "crm", "cloud"}
}

// CatalogToolsPerDomain is how many tools each [Catalog] server offers.
const CatalogToolsPerDomain = 100

// A catalogEntity is a thing a domain's tools act on.
type catalogEntity struct {
	name   string   // in tool names
	phrase string   // in descriptions
	about  string   // what it is, for descriptions
	fields []string // its arguments besides its id: "name:description"
}

// A catalogAction is what a tool does to an entity; desc is a template
// with %[1]s for the entity phrase and %[2]s for what it is.
type catalogAction struct {
	verb, desc string
	withFields bool // takes the entity's fields as arguments
	withID     bool // takes the entity's id
}

var catalogActions = []catalogAction{
	{"create", "Create a new %[1]s (%[2]s) with the given fields and return it.", true, false},
	{"get", "Get one %[1]s (%[2]s) by its id, with every field.", false, true},
	{"list", "List the %[1]ss (%[2]s), newest first, a page at a time, optionally filtered.", false, false},
	{"update", "Update fields of an existing %[1]s (%[2]s); fields left out keep their values.", true, true},
	{"delete", "Delete a %[1]s (%[2]s) permanently. This cannot be undone.", false, true},
	{"search", "Search %[1]ss (%[2]s) by free text over their fields and return the best matches.", false, false},
	{"archive", "Archive a %[1]s (%[2]s) so it is hidden from lists but kept for the record.", false, true},
	{"export", "Export %[1]ss (%[2]s) as CSV or JSON for reporting or backup.", false, false},
	{"count", "Count the %[1]ss (%[2]s) that match a filter, without returning them.", false, false},
	{"watch", "Subscribe to changes of a %[1]s (%[2]s) and get notified when it is modified.", false, true},
}

// catalogEntities lists each domain's ten entities.
var catalogEntities = map[string][]catalogEntity{
	"github": {
		{"issue", "issue", "a bug report or feature request in a repository", []string{"title:the issue title", "body:the issue text in Markdown", "labels:label names"}},
		{"pull_request", "pull request", "proposed code changes to merge from one branch into another", []string{"head:the branch with the changes", "base:the branch to merge into", "title:the pull request title"}},
		{"repository", "repository", "a git repository hosted on GitHub", []string{"name:the repository name", "private:whether it is private", "description:what it holds"}},
		{"branch", "branch", "a line of development in a git repository", []string{"name:the branch name", "from:the commit or branch to start from"}},
		{"commit", "commit", "a recorded change to the files of a repository", []string{"message:the commit message", "sha:the commit hash"}},
		{"release", "release", "a tagged version of the software with release notes", []string{"tag:the git tag", "notes:the release notes"}},
		{"workflow_run", "workflow run", "one execution of a GitHub Actions CI pipeline", []string{"workflow:the workflow file", "ref:the branch or tag to build"}},
		{"label", "label", "a colored tag used to categorise issues", []string{"name:the label name", "color:hex color"}},
		{"milestone", "milestone", "a target date grouping issues for a release", []string{"title:the milestone title", "due_on:the due date"}},
		{"gist", "gist", "a small shared code snippet or note", []string{"filename:the file name", "content:the snippet text"}},
	},
	"slack": {
		{"Message", "message", "a chat message posted in a channel or direct conversation", []string{"channel:the channel id", "text:the message text"}},
		{"Channel", "channel", "a chat room for a team or topic", []string{"name:the channel name", "topic:the channel topic"}},
		{"Reaction", "reaction", "an emoji reaction added to a chat message", []string{"emoji:the emoji name", "message_ts:the message timestamp"}},
		{"Thread", "thread", "a conversation of replies under one chat message", []string{"parent_ts:the parent message timestamp", "text:the reply"}},
		{"Member", "workspace member", "a person in the chat workspace, their profile and status", []string{"email:the member's email", "title:their job title"}},
		{"Reminder", "reminder", "a chat reminder that pings someone at a given time", []string{"text:what to remind", "time:when to remind"}},
		{"Bookmark", "bookmark", "a pinned link shown at the top of a channel", []string{"link:the URL", "title:the bookmark title"}},
		{"Usergroup", "user group", "a named group of people that can be mentioned together", []string{"handle:the @handle", "name:the group name"}},
		{"Emoji", "custom emoji", "a custom emoji image uploaded to the workspace", []string{"name:the emoji name", "image_url:the image"}},
		{"Huddle", "huddle", "a live audio call in a channel", []string{"channel:the channel id"}},
	},
	"calendar": {
		{"event", "calendar event", "a meeting or appointment with a start and end time", []string{"summary:the event title", "start:start time", "end:end time", "attendees:emails of the invitees"}},
		{"calendar", "calendar", "a named schedule of events owned by a person or team", []string{"summary:the calendar name", "time_zone:its time zone"}},
		{"attendee", "attendee", "a person invited to a meeting and their RSVP", []string{"email:the attendee's email", "response:accepted, declined or tentative"}},
		{"availability", "free/busy availability", "the free and busy time slots of people", []string{"emails:whose schedule", "window:the time window"}},
		{"room", "meeting room", "a bookable conference room resource", []string{"building:the building", "capacity:seats"}},
		{"recurrence", "recurring series", "a repeating event rule such as weekly standups", []string{"rrule:the RRULE", "until:the last date"}},
		{"out_of_office", "out-of-office block", "vacation or leave time shown as unavailable", []string{"start:first day away", "end:last day away"}},
		{"focus_time", "focus time block", "time reserved for deep work with notifications muted", []string{"start:start time", "end:end time"}},
		{"booking_page", "appointment booking page", "a public page where others book slots with you", []string{"duration:minutes per slot", "title:the page title"}},
		{"holiday", "public holiday", "a national holiday in a country's calendar", []string{"country:country code", "year:the year"}},
	},
	"files": {
		{"file", "file", "a document stored in the drive", []string{"path:the file path", "content:the file contents"}},
		{"folder", "folder", "a directory that holds files", []string{"path:the folder path"}},
		{"permission", "sharing permission", "who may view or edit a file or folder", []string{"email:who gets access", "role:viewer or editor"}},
		{"revision", "file revision", "an earlier saved version of a document", []string{"revision_id:the version id"}},
		{"comment", "file comment", "a note left on a document by a reviewer", []string{"text:the comment text", "anchor:the quoted passage"}},
		{"shortcut", "shortcut", "a link to a file placed in another folder", []string{"target:the file it points to"}},
		{"trash_item", "trashed item", "a deleted file waiting in the trash bin", []string{"path:the original path"}},
		{"thumbnail", "thumbnail", "a small preview picture of a document or photo", []string{"size:pixels"}},
		{"upload_session", "resumable upload", "a large file upload sent in chunks", []string{"size:total bytes", "mime_type:the content type"}},
		{"storage_quota", "storage quota", "how much disk space the drive uses and has left", []string{"unit:bytes, MB or GB"}},
	},
	"database": {
		{"table", "table", "a relational table with columns and rows", []string{"name:the table name", "columns:column definitions"}},
		{"row", "row", "one record stored in a table", []string{"table:the table", "values:column values"}},
		{"index", "index", "a structure that speeds up queries on columns", []string{"table:the table", "columns:indexed columns"}},
		{"query", "saved SQL query", "a stored SQL SELECT statement that can be run again", []string{"sql:the SQL text", "params:bind parameters"}},
		{"view", "view", "a virtual table defined by a query", []string{"name:the view name", "sql:its SELECT"}},
		{"backup", "database backup", "a snapshot of the whole database for restore", []string{"label:a name for the snapshot"}},
		{"migration", "schema migration", "a versioned change to the database schema", []string{"version:the migration version", "up:the SQL to apply"}},
		{"user_role", "database role", "a login role with grants and privileges", []string{"role:the role name", "grants:privileges"}},
		{"connection", "connection", "an open client session to the database server", []string{"pid:the backend process id"}},
		{"slow_log", "slow query log entry", "a statement that took longer than the threshold", []string{"min_ms:minimum duration"}},
	},
	"weather": {
		{"forecast", "weather forecast", "the predicted temperature, rain and wind for the coming days", []string{"city:the city", "days:how many days"}},
		{"current_conditions", "current weather", "the temperature, humidity and sky right now", []string{"city:the city", "units:metric or imperial"}},
		{"alert", "severe weather alert", "a warning about storms, floods or heat issued by authorities", []string{"region:the region", "severity:minimum severity"}},
		{"air_quality", "air quality reading", "pollution and AQI index values", []string{"city:the city"}},
		{"station", "weather station", "a sensor site that reports observations", []string{"station_id:the station code", "lat:latitude", "lon:longitude"}},
		{"radar_image", "radar image", "a precipitation radar map tile", []string{"zoom:map zoom", "region:the area"}},
		{"uv_index", "UV index", "the strength of ultraviolet sunlight for sunburn risk", []string{"city:the city"}},
		{"pollen_count", "pollen count", "allergy pollen levels of trees, grass and weeds", []string{"city:the city"}},
		{"tide", "tide table", "high and low tide times at a coast", []string{"port:the harbour"}},
		{"historical_record", "historical weather record", "past observations such as last year's temperature on a date", []string{"city:the city", "date:the date"}},
	},
	"payments": {
		{"charge", "charge", "a card payment taken from a customer", []string{"amount:amount in cents", "currency:ISO currency", "card:the card token"}},
		{"refund", "refund", "money returned to a customer for a charge", []string{"charge_id:the charge", "amount:amount in cents"}},
		{"invoice", "invoice", "a bill sent to a customer listing what they owe", []string{"customer_id:the customer", "due_date:when payment is due"}},
		{"subscription", "subscription", "a recurring billing plan a customer is signed up to", []string{"customer_id:the customer", "price_id:the plan price"}},
		{"payout", "payout", "a transfer of the balance to the merchant's bank account", []string{"amount:amount in cents", "destination:bank account"}},
		{"dispute", "dispute", "a chargeback a cardholder filed with their bank", []string{"evidence:supporting documents"}},
		{"coupon", "coupon", "a discount code that reduces the price", []string{"percent_off:discount percent", "code:the promo code"}},
		{"payment_method", "payment method", "a saved credit card or bank account", []string{"type:card or bank", "customer_id:the owner"}},
		{"balance_transaction", "balance transaction", "a ledger entry moving funds in the account balance", []string{"type:the kind of movement"}},
		{"tax_rate", "tax rate", "a VAT or sales tax percentage applied to prices", []string{"percentage:the rate", "jurisdiction:where it applies"}},
	},
	"email": {
		{"email", "email", "an email message in the mailbox", []string{"to:recipient addresses", "subject:the subject line", "body:the message text"}},
		{"draft", "draft", "an unsent email being written", []string{"to:recipients", "subject:the subject line"}},
		{"mailbox_label", "mail label", "a tag or folder that sorts emails", []string{"name:the label name"}},
		{"attachment", "attachment", "a file attached to an email", []string{"message_id:the email", "filename:the file name"}},
		{"filter_rule", "inbox filter rule", "an automatic rule that sorts or forwards incoming mail", []string{"from:sender to match", "action:what to do"}},
		{"contact", "address book contact", "a person's name and email address saved for mailing", []string{"name:full name", "email:address"}},
		{"signature", "email signature", "the text appended to the bottom of outgoing mail", []string{"html:the signature"}},
		{"vacation_responder", "auto-reply", "an automatic out-of-office reply to incoming email", []string{"message:the reply text", "until:end date"}},
		{"spam_report", "spam report", "an email flagged as junk or phishing", []string{"message_id:the email"}},
		{"mailing_list", "mailing list", "a group address that delivers to many subscribers", []string{"address:the list address", "subscribers:member emails"}},
	},
	"crm": {
		{"lead", "sales lead", "a prospective customer not yet qualified", []string{"company:company name", "source:where the lead came from"}},
		{"account", "customer account", "a company that buys from us", []string{"name:company name", "industry:the industry"}},
		{"deal", "deal", "a sales opportunity moving through the pipeline with a value", []string{"amount:deal value", "stage:pipeline stage", "close_date:expected close"}},
		{"crm_contact", "customer contact", "a person at a customer company", []string{"name:full name", "phone:phone number"}},
		{"task", "follow-up task", "a to-do for a sales rep such as calling a customer", []string{"due:due date", "owner:assigned rep"}},
		{"note", "account note", "free-text notes from a sales call or meeting", []string{"text:the note"}},
		{"pipeline", "sales pipeline", "the ordered stages deals go through", []string{"stages:stage names"}},
		{"quote", "price quote", "a priced offer of products sent to a customer", []string{"deal_id:the deal", "line_items:products and prices"}},
		{"campaign", "marketing campaign", "an outreach effort that generates leads", []string{"budget:campaign budget", "channel:email, ads or events"}},
		{"support_case", "support case", "a customer's support ticket about a problem", []string{"subject:the problem", "priority:low to urgent"}},
	},
	"cloud": {
		{"vm_instance", "virtual machine", "a compute server instance running in the cloud", []string{"machine_type:the size", "image:the boot image", "zone:the zone"}},
		{"bucket", "storage bucket", "an object storage container for blobs", []string{"name:the bucket name", "region:the region"}},
		{"kubernetes_pod", "Kubernetes pod", "a running group of containers in a cluster", []string{"namespace:the namespace", "image:container image"}},
		{"deployment", "Kubernetes deployment", "a rolling set of replicated pods for an app", []string{"replicas:how many pods", "image:container image"}},
		{"dns_record", "DNS record", "a domain name entry such as an A or CNAME record", []string{"name:the host name", "type:A, AAAA or CNAME", "value:the target"}},
		{"firewall_rule", "firewall rule", "a network rule allowing or blocking ports and addresses", []string{"port:the port", "source:allowed CIDR"}},
		{"load_balancer", "load balancer", "a front end spreading traffic over servers", []string{"backends:backend servers", "port:the listener port"}},
		{"secret", "secret", "a stored credential such as an API key or password", []string{"name:the secret name", "value:the secret value"}},
		{"log_entry", "log entry", "a line of application or system logs", []string{"filter:a log query", "since:start time"}},
		{"cost_report", "cloud cost report", "the money spent on cloud services per project", []string{"month:the month", "project:the project"}},
	},
}

// catalogStyle names a domain's tools as real servers do: snake_case,
// camelCase or kebab-case.
func catalogStyle(domain, verb, entity string) string {
	switch domain {
	case "slack", "crm":
		var b strings.Builder
		b.WriteString(verb)
		for _, w := range strings.Split(entity, "_") {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
		return b.String()
	case "calendar", "weather":
		return verb + "-" + strings.ReplaceAll(entity, "_", "-")
	}
	return verb + "_" + entity
}

// Catalog returns a server of one of [CatalogDomains] with
// [CatalogToolsPerDomain] tools: every action (create, get, list, update,
// delete, search, archive, export, count, watch) on each of the domain's
// ten entities, with descriptions and argument schemas. A call echoes the
// tool's name and arguments. It returns nil for an unknown domain.
func Catalog(domain string) *mcp.Server {
	entities, ok := catalogEntities[domain]
	if !ok {
		return nil
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: domain, Version: "1.0.0"}, nil)
	for _, e := range entities {
		for _, a := range catalogActions {
			name := catalogStyle(domain, a.verb, e.name)
			srv.AddTool(&mcp.Tool{
				Name:        name,
				Description: fmt.Sprintf(a.desc, e.phrase, e.about),
				InputSchema: catalogSchema(e, a),
			}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{text(name + " " + string(req.Params.Arguments))}}, nil
			})
		}
	}
	return srv
}

// catalogSchema is the input schema of action a on entity e.
func catalogSchema(e catalogEntity, a catalogAction) json.RawMessage {
	props := map[string]any{}
	var required []string
	if a.withID {
		props["id"] = map[string]any{"type": "string", "description": "The id of the " + e.phrase + "."}
		required = append(required, "id")
	}
	if a.withFields {
		for _, f := range e.fields {
			n, d, _ := strings.Cut(f, ":")
			props[n] = map[string]any{"type": "string", "description": strings.ToUpper(d[:1]) + d[1:] + "."}
		}
	}
	switch a.verb {
	case "list", "search", "count", "export":
		props["filter"] = map[string]any{"type": "string", "description": "Only " + e.phrase + "s matching this filter."}
		if a.verb == "search" {
			props["query"] = map[string]any{"type": "string", "description": "Words to look for."}
			required = append(required, "query")
		}
		if a.verb != "count" {
			props["limit"] = map[string]any{"type": "integer", "minimum": 1, "maximum": 100}
		}
		if a.verb == "export" {
			props["format"] = map[string]any{"type": "string", "enum": []string{"csv", "json"}}
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	b, _ := json.Marshal(s)
	return b
}
