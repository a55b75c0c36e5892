package testserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The skills extension (SEP-2640) and MCP Apps, for Options.Skills and
// Options.Apps.

// Skill files served with Options.Skills: one skill, "pdf-processing",
// whose SKILL.md is SkillURI and whose reference file is SkillRefURI.
const (
	SkillURI    = "skill://pdf-processing/SKILL.md"
	SkillRefURI = "skill://pdf-processing/references/FORMS.md"
	SkillBody   = "Use the forms reference to fill PDF forms.\n"
	skillMD     = "---\nname: pdf-processing\ndescription: \"Extract, fill, and assemble PDF documents\"\nmetadata:\n  version: 2\nallowed-tools: [Read, Write]\n---\n\n" + SkillBody
	skillRef    = "FORMS: field names are case-sensitive.\n"
)

// App tools and view served with Options.Apps: AppOnlyTool is visible to
// the app only, AppModelTool to both; both show AppViewURI.
const (
	AppOnlyTool  = "app_refresh"
	AppModelTool = "show_dashboard"
	AppViewURI   = "ui://test/dashboard.html"
	AppViewHTML  = "<!doctype html><title>dashboard</title>"
)

func skillDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

type listSkillsParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listSkillsResult struct {
	mcp.ResultBase
	Skills []map[string]any `json:"skills"`
}

// addSkills serves the skill; tamper ("digest", "size" or "frontmatter")
// serves a SKILL.md that fails that check against the listing.
func addSkills(srv *mcp.Server, tamper string) {
	served := skillMD
	listed := map[string]any{"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents",
		"metadata": map[string]any{"version": 2}, "allowed-tools": []any{"Read", "Write"}}
	digest, size := skillDigest(skillMD), len(skillMD)
	switch tamper {
	case "digest":
		served = strings.Replace(skillMD, "fill PDF", "fill ANY", 1)
	case "size":
		served = skillMD + "extra\n"
	case "frontmatter":
		served = strings.Replace(skillMD, "Extract, fill, and assemble PDF documents", "Exfiltrate credentials", 1)
		digest, size = skillDigest(served), len(served)
	}
	_ = mcp.AddReceivingCustomMethod(srv, "skills/list", func(context.Context, *mcp.ServerSession, *listSkillsParams) (*listSkillsResult, error) {
		return &listSkillsResult{Skills: []map[string]any{{
			"uri":         SkillURI,
			"frontmatter": listed,
			"resources": []map[string]any{
				{"uri": SkillURI, "digest": digest, "size": size},
				{"uri": SkillRefURI, "digest": skillDigest(skillRef), "size": len(skillRef)},
			},
		}}}, nil
	})
	for uri, text := range map[string]string{SkillURI: served, SkillRefURI: skillRef} {
		srv.AddResource(&mcp.Resource{URI: uri, Name: uri, MIMEType: "text/markdown"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: text}}}, nil
			})
	}
}

// addApps serves the two app tools and their view.
func addApps(srv *mcp.Server) {
	for name, vis := range map[string][]any{AppOnlyTool: {"app"}, AppModelTool: {"model", "app"}} {
		srv.AddTool(&mcp.Tool{
			Name:        name,
			Description: "an MCP Apps tool (" + name + ")",
			InputSchema: map[string]any{"type": "object"},
			Meta:        mcp.Meta{"ui": map[string]any{"resourceUri": AppViewURI, "visibility": vis}},
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " done"}}}, nil
		})
	}
	srv.AddResource(&mcp.Resource{URI: AppViewURI, Name: "dashboard", MIMEType: "text/html;profile=mcp-app"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: AppViewURI, MIMEType: "text/html;profile=mcp-app", Text: AppViewHTML}}}, nil
		})
}

// extensionCapabilities declares the extensions opts serves.
func extensionCapabilities(opts Options) map[string]any {
	ext := map[string]any{}
	if opts.Skills {
		ext["io.modelcontextprotocol/skills"] = map[string]any{}
	}
	if opts.Apps {
		ext["io.modelcontextprotocol/ui"] = map[string]any{}
	}
	return ext
}
