package rivals

import (
	"os/exec"
	"path/filepath"
	"strings"
)

// Versions names the installed server programs' versions, as their
// --version prints them (first line), for the report of a run; a program
// that is missing or fails is left out.
func Versions() map[string]string {
	out := map[string]string{}
	try := func(name, prog string) {
		b, err := exec.Command(prog, "--version").Output()
		if err == nil {
			out[name] = strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
		}
	}
	if p, err := lookPath(etcdServer, "etcd-server"); err == nil {
		try("etcd", p)
	}
	if p, err := lookPath(redisServer, "redis-server"); err == nil {
		try("redis", p)
	}
	if dir, err := pgBinDir(); err == nil {
		try("postgres", filepath.Join(dir, "postgres"))
	}
	return out
}
