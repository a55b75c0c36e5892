package eino_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"testing"

	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

func TestMultimodalTool(t *testing.T) {
	tools := adapterTools(t, testserver.New(testserver.Options{}), nil)
	var image, link *eino.MultimodalTool
	for _, tl := range tools {
		mt, err := eino.NewMultimodalTool(tl)
		if err != nil {
			t.Fatal(err)
		}
		switch tl.Name {
		case "image":
			image = mt
		case "link":
			link = mt
		}
	}
	res, err := image.InvokableRun(context.Background(), &schema.ToolArgument{Text: `{}`})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Parts) != 1 || res.Parts[0].Type != schema.ToolPartTypeImage || res.Parts[0].Image.MIMEType != "image/png" {
		t.Fatalf("parts %+v", res.Parts)
	}
	data, _ := base64.StdEncoding.DecodeString(*res.Parts[0].Image.Base64Data)
	if !bytes.Equal(data, testserver.TinyPNG) {
		t.Error("image bytes changed")
	}
	res, err = link.InvokableRun(context.Background(), &schema.ToolArgument{Text: `{}`})
	if err != nil || len(res.Parts) != 2 || res.Parts[0].Type != schema.ToolPartTypeText || res.Parts[1].Text != "see doc1" {
		t.Errorf("link parts %+v %v", res, err)
	}
}
