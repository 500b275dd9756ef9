package rivals

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Etcd is a three-member etcd cluster on loopback (Debian's etcd 3.4
// binary), each member with its own free client and peer ports and its
// own data directory. Durability is etcd's default, which is not
// optional: every Raft entry is fsynced to the write-ahead log before it
// counts, on a majority of members.
type Etcd struct {
	// Members are the servers, in the order of Endpoints.
	Members []*Process

	endpoints []string
	dir       string
}

// etcdServer is the program StartEtcd runs; a test may point it elsewhere.
var etcdServer = "etcd"

// EtcdSize is the number of members StartEtcd starts.
const EtcdSize = 3

// StartEtcd starts the cluster and returns once every member answers and
// the cluster has a leader.
func StartEtcd(ctx context.Context) (*Etcd, error) {
	return withFreshPorts(func() (*Etcd, error) { return startEtcd(ctx) })
}

func startEtcd(ctx context.Context) (*Etcd, error) {
	bin, err := lookPath(etcdServer, "etcd-server")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "zklocks-etcd-")
	if err != nil {
		return nil, fmt.Errorf("rivals: %w", err)
	}
	ports, err := pickPorts(2 * EtcdSize)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	e := &Etcd{dir: dir}
	var initial []string
	for i := range EtcdSize {
		initial = append(initial, fmt.Sprintf("m%d=http://127.0.0.1:%d", i+1, ports[2*i+1]))
		e.endpoints = append(e.endpoints, fmt.Sprintf("127.0.0.1:%d", ports[2*i]))
	}
	// A token of its own keeps members of two clusters started side by
	// side from ever taking each other's peers for their own.
	token := make([]byte, 8)
	rand.Read(token)
	for i := range EtcdSize {
		name := fmt.Sprintf("m%d", i+1)
		client := "http://" + e.endpoints[i]
		peer := fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1])
		cmd := exec.Command(bin,
			"--name", name,
			"--data-dir", filepath.Join(dir, name),
			"--listen-client-urls", client,
			"--advertise-client-urls", client,
			"--listen-peer-urls", peer,
			"--initial-advertise-peer-urls", peer,
			"--initial-cluster", strings.Join(initial, ","),
			"--initial-cluster-token", "zklocks-"+hex.EncodeToString(token),
			"--initial-cluster-state", "new",
			"--logger", "zap",
			"--log-outputs", "stderr",
		)
		cmd.Dir = dir
		cmd.Env = etcdEnv()
		p, err := launch(fmt.Sprintf("etcd member %d (%s)", i+1, e.endpoints[i]),
			filepath.Join(dir, name+".log"), syscall.SIGTERM, cmd)
		if err != nil {
			e.Close()
			return nil, err
		}
		e.Members = append(e.Members, p)
	}
	if err := e.waitReady(ctx); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// etcdEnv is the environment without ETCD_* settings, which etcd would
// read as flags and refuse beside the same flag given on its command line.
func etcdEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ETCD_") {
			env = append(env, kv)
		}
	}
	return env
}

// Endpoints are the members' client addresses (host:port).
func (e *Etcd) Endpoints() []string { return append([]string(nil), e.endpoints...) }

// Client returns a new client of the whole cluster; the caller closes it.
func (e *Etcd) Client() (*clientv3.Client, error) {
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   e.Endpoints(),
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("rivals: etcd client: %w", err)
	}
	return c, nil
}

func (e *Etcd) waitReady(ctx context.Context) error {
	c, err := e.Client()
	if err != nil {
		return err
	}
	defer c.Close()
	for i, ep := range e.endpoints {
		for {
			try, cancel := context.WithTimeout(ctx, time.Second)
			st, err := c.Status(try, ep)
			cancel()
			if err == nil && st.Leader != 0 {
				break
			}
			select {
			case <-e.Members[i].Exited():
				return e.Members[i].exitedEarly()
			case <-ctx.Done():
				return fmt.Errorf("rivals: %s is not ready (%v): %w\n%s", e.Members[i].Name, err, ctx.Err(), e.Members[i].tail())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

// Close stops every member and removes the cluster's directory.
func (e *Etcd) Close() error {
	var errs []error
	for _, m := range e.Members {
		errs = append(errs, m.Stop())
	}
	errs = append(errs, os.RemoveAll(e.dir))
	return errors.Join(errs...)
}
