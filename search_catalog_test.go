package mcpadapter_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// catalogQueries is the labelled set for the 1,000-tool catalog: what a
// user might ask, and the tools (any one of them) that answer it.
var catalogQueries = []struct {
	query string
	want  []string
}{
	{"open a new bug report in the repo", []string{"github_create_issue"}},
	{"merge my feature branch: open a pull request", []string{"github_create_pull_request"}},
	{"show me the latest CI pipeline runs", []string{"github_list_workflow_run"}},
	{"publish a new tagged version with release notes", []string{"github_create_release"}},
	{"find issues mentioning login crash", []string{"github_search_issue"}},
	{"delete the stale branch", []string{"github_delete_branch"}},
	{"share a code snippet as a gist", []string{"github_create_gist"}},
	{"add a colored label to categorise bugs", []string{"github_create_label"}},
	{"post a message to the team channel", []string{"slack_createMessage"}},
	{"add a thumbs up emoji reaction to that message", []string{"slack_createReaction"}},
	{"remind me tomorrow at 9 to call Bob", []string{"slack_createReminder"}},
	{"change the channel topic", []string{"slack_updateChannel"}},
	{"who is in the workspace? list the members", []string{"slack_listMember"}},
	{"reply in the thread under the announcement", []string{"slack_createThread"}},
	{"schedule a meeting with Ana on Friday at 3pm", []string{"calendar_create-event"}},
	{"when are Bob and Carol both free this week", []string{"calendar_get-availability", "calendar_list-availability", "calendar_search-availability"}},
	{"find a meeting room with capacity for 10 people", []string{"calendar_search-room", "calendar_list-room"}},
	{"cancel my 2pm meeting", []string{"calendar_delete-event"}},
	{"set up a weekly standup as a recurring series every Monday", []string{"calendar_create-recurrence"}},
	{"block my calendar while I'm on vacation next week", []string{"calendar_create-out-of-office"}},
	{"which public holidays are there in Germany in 2027", []string{"calendar_list-holiday"}},
	{"upload a large video file in chunks", []string{"files_create_upload_session"}},
	{"make a new folder for invoices", []string{"files_create_folder"}},
	{"give alice edit access to the report", []string{"files_create_permission"}},
	{"restore an older version of the document", []string{"files_get_revision", "files_list_revision"}},
	{"how much disk space is left in my drive", []string{"files_get_storage_quota"}},
	{"empty the trash bin", []string{"files_delete_trash_item"}},
	{"read the contents of notes.txt", []string{"files_get_file"}},
	{"create a table for orders with id and total columns", []string{"database_create_table"}},
	{"insert a row into the customers table", []string{"database_create_row"}},
	{"add an index on the email column to speed up queries", []string{"database_create_index"}},
	{"take a backup snapshot of the database", []string{"database_create_backup"}},
	{"apply the new schema migration", []string{"database_create_migration"}},
	{"which SQL statements are slow", []string{"database_list_slow_log", "database_search_slow_log"}},
	{"kill the idle client connection to the database", []string{"database_delete_connection"}},
	{"what's the weather forecast for Paris this weekend", []string{"weather_get-forecast"}},
	{"what is the temperature in London right now", []string{"weather_get-current-conditions"}},
	{"any storm or flood warnings for Florida", []string{"weather_list-alert", "weather_search-alert"}},
	{"how polluted is the air in Delhi today", []string{"weather_get-air-quality"}},
	{"pollen levels for hay fever in Berlin", []string{"weather_get-pollen-count"}},
	{"when is high tide in Brest", []string{"weather_get-tide"}},
	{"how hot was it on this date last year in Rome", []string{"weather_get-historical-record"}},
	{"charge the customer's card 20 dollars", []string{"payments_create_charge"}},
	{"refund the last payment", []string{"payments_create_refund"}},
	{"send an invoice to Acme due next month", []string{"payments_create_invoice"}},
	{"cancel the customer's monthly subscription", []string{"payments_delete_subscription", "payments_archive_subscription"}},
	{"create a 20% discount promo code", []string{"payments_create_coupon"}},
	{"respond to a chargeback with evidence", []string{"payments_update_dispute"}},
	{"pay out the balance to our bank account", []string{"payments_create_payout"}},
	{"write an email to bob about the launch", []string{"email_create_email"}},
	{"save a draft reply", []string{"email_create_draft"}},
	{"set up an auto-reply while I'm away", []string{"email_create_vacation_responder"}},
	{"automatically sort incoming newsletters with a rule", []string{"email_create_filter_rule"}},
	{"download the PDF attached to the last email", []string{"email_get_attachment"}},
	{"report this email as phishing", []string{"email_create_spam_report"}},
	{"add a new sales lead from the conference", []string{"crm_createLead"}},
	{"move the Acme deal to the negotiation stage", []string{"crm_updateDeal"}},
	{"write down notes from today's sales call", []string{"crm_createNote"}},
	{"send a price quote for 50 licenses", []string{"crm_createQuote"}},
	{"open a support ticket for a customer outage", []string{"crm_createSupportCase"}},
	{"spin up a new virtual machine in us-east", []string{"cloud_create_vm_instance"}},
	{"scale the web deployment to 5 replicas", []string{"cloud_update_deployment"}},
	{"point www at the new server with a DNS record", []string{"cloud_create_dns_record", "cloud_update_dns_record"}},
	{"allow port 443 through the firewall", []string{"cloud_create_firewall_rule", "cloud_update_firewall_rule"}},
	{"store the API key as a secret", []string{"cloud_create_secret"}},
	{"how much money did we spend on cloud last month", []string{"cloud_get_cost_report", "cloud_list_cost_report"}},
	{"show error logs from the last hour", []string{"cloud_search_log_entry", "cloud_list_log_entry"}},
	{"list the pods in the payments namespace", []string{"cloud_list_kubernetes_pod"}},
}

// newCatalogAdapter returns an adapter over the ten catalog servers,
// in-process, with tool search on.
func newCatalogAdapter(t testing.TB, opts *mcpadapter.Options) *mcpadapter.Adapter {
	t.Helper()
	var clients []*mcpadapter.Client
	for _, d := range testserver.CatalogDomains() {
		c, err := mcpadapter.NewClient(testserver.Catalog(d), &mcpadapter.ClientOptions{Name: d})
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	g, err := mcpadapter.GroupOf(clients...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := mcpadapter.New(g, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// TestToolSearchCatalog measures tool search over 1,000 tools of 10
// servers: the tokens of tool definitions per turn (all of them, or the
// pair) and the top-5 accuracy on the labelled queries.
func TestToolSearchCatalog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	plain := newCatalogAdapter(t, nil)
	all, err := plain.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 10*testserver.CatalogToolsPerDomain {
		t.Fatalf("catalog: %d tools, want %d", len(all), 10*testserver.CatalogToolsPerDomain)
	}
	names := make(map[string]bool, len(all))
	for _, tl := range all {
		names[tl.Name] = true
	}
	a := newCatalogAdapter(t, &mcpadapter.Options{ToolSearch: &mcpadapter.ToolSearch{}})
	pair, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pair) != 2 || pair[0].Name != mcpadapter.SearchToolsName || pair[1].Name != mcpadapter.CallToolName {
		t.Fatalf("Tools with search: %d tools, want search_tools and call_tool", len(pair))
	}
	res, err := pair[1].Call(ctx, json.RawMessage(`{"name":"github_create_issue","arguments":{"title":"crash"}}`))
	if err != nil || res.IsError || res.Text() != `create_issue {"title":"crash"}` {
		t.Fatalf("call_tool github_create_issue: %v %v", res, err)
	}
	allTokens, pairTokens := mcpadapter.EstimateTokens(all), mcpadapter.EstimateTokens(pair)
	ratio := float64(allTokens) / float64(pairTokens)
	t.Logf("tokens of tool definitions per turn: all %d tools %d, pair %d: %.0fx fewer", len(all), allTokens, pairTokens, ratio)
	if ratio < 20 {
		t.Errorf("the pair saves %.1fx, want at least 20x", ratio)
	}

	found, first := 0, 0
	for _, q := range catalogQueries {
		for _, w := range q.want {
			if !names[w] {
				t.Fatalf("query %q expects %q, which the catalog does not have", q.query, w)
			}
		}
		hits, err := a.Search(ctx, q.query, 5)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]string, len(hits))
		for i, h := range hits {
			got[i] = h.Tool.Name
		}
		if len(got) > 0 && slices.Contains(q.want, got[0]) {
			first++
		}
		if slices.ContainsFunc(got, func(n string) bool { return slices.Contains(q.want, n) }) {
			found++
		} else {
			t.Logf("miss: %q: want one of %v, top 5: %v", q.query, q.want, got)
		}
	}
	acc := float64(found) / float64(len(catalogQueries))
	t.Logf("top-5 accuracy: %d of %d queries (%.1f%%); top-1: %d", found, len(catalogQueries), 100*acc, first)
	// The ranking's measure is the evaluation on real servers' tools
	// (toolsearch/eval_test.go, docs/tool-search.md); this generated
	// catalog, where ten tools per entity differ by one verb, is a floor
	// against regressions.
	if len(catalogQueries) < 50 || acc < 0.75 {
		t.Errorf("top-5 accuracy %.1f%% on %d queries, want at least 75%% on 50 or more", 100*acc, len(catalogQueries))
	}
}

// BenchmarkToolSearch measures the catalog's two costs: listing the
// 1,000 tools and rebuilding the index (each Tools call with ToolSearch
// on), and one query.
func BenchmarkToolSearch(b *testing.B) {
	ctx := context.Background()
	a := newCatalogAdapter(b, &mcpadapter.Options{ToolSearch: &mcpadapter.ToolSearch{}})
	b.Run("Tools", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.Tools(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Search", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.Search(ctx, "schedule a meeting with Ana on Friday at 3pm", 5); err != nil {
				b.Fatal(err)
			}
		}
	})
}
