// Command npmsetup installs (or finds) Node 22 and the pinned npm MCP peers
// exactly as the tests do (internal/testenv), and prints
//
//	node=<absolute path of the Node 22 binary>
//	npmdir=<directory holding node_modules>
//
// on stdout. .ci/run uses it to pre-install once and export MCPADAPTER_NODE.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/mcpadapter/mcpadapter/internal/testenv"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("npmsetup: ")
	node, dir, err := testenv.Setup(context.Background(), log.Printf)
	if err != nil {
		log.Fatal(err)
	}
	for _, bin := range []struct{ pkg, name string }{
		{testenv.EverythingPackage, "mcp-server-everything"},
		{testenv.ConformancePackage, "conformance"},
	} {
		if _, err := testenv.PackageBin(dir, bin.pkg, bin.name); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Fprintf(os.Stdout, "node=%s\nnpmdir=%s\n", node, dir)
}
