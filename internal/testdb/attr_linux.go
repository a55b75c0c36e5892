package testdb

import (
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// serverAttr runs a server in its own process group, killed if the test
// process dies, and, if asNobody, as user nobody when the test runs as
// root.
func serverAttr(asNobody bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if uid, gid, ok := nobody(); ok && asNobody {
		a.Credential = &syscall.Credential{Uid: uid, Gid: gid}
	}
	return a
}

// chownForServer gives dir to the user the server runs as.
func chownForServer(dir string) error {
	if uid, gid, ok := nobody(); ok {
		return os.Chown(dir, int(uid), int(gid))
	}
	return nil
}

// nobody returns user nobody's IDs when running as root.
func nobody() (uid, gid uint32, ok bool) {
	if os.Geteuid() != 0 {
		return 0, 0, false
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return 0, 0, false
	}
	ui, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gi, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uint32(ui), uint32(gi), true
}
