package mcpadapter

import "github.com/mcpadapter/mcpadapter/internal/engine"

// FastPathBuilt tells the external tests whether this build has the fast
// path (not built with -tags mcpadapter_nofastpath).
const FastPathBuilt = engine.FastPathBuilt
