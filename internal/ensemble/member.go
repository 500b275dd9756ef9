package ensemble

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// member is one server of the ensemble: its fixed identity (id, ports,
// directory) and the JVM currently running it, if any.
type member struct {
	id                                   int // ZooKeeper's myid, index+1
	dir                                  string
	host                                 string // the address it binds (Config.Hosts)
	clientPort, quorumPort, electionPort int
	// via holds, with ProxiedLinks, the ports by which this member reaches
	// each other member (by id): the proxies of its quorum and election
	// ports.
	via  map[int][2]int
	proc *process
}

// process is one run of a member's JVM.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // Wait's result, valid once done is closed
}

func (m *member) addr() string    { return net.JoinHostPort(m.host, strconv.Itoa(m.clientPort)) }
func (m *member) logFile() string { return filepath.Join(m.dir, "server.log") }
func (m *member) outFile() string { return filepath.Join(m.dir, "jvm.out") }

func (m *member) running() bool {
	if m.proc == nil {
		return false
	}
	select {
	case <-m.proc.done:
		return false
	default:
		return true
	}
}

// writeFiles creates the member's directory with its myid, zoo.cfg and
// logging configuration.
func (m *member) writeFiles(cfg Config, all []*member) error {
	if err := os.MkdirAll(filepath.Join(m.dir, "data"), 0o755); err != nil {
		return fmt.Errorf("ensemble: %w", err)
	}
	files := map[string]string{
		filepath.Join(m.dir, "data", "myid"):     strconv.Itoa(m.id) + "\n",
		filepath.Join(m.dir, "zoo.cfg"):          cfg.zooCfg(m, all),
		filepath.Join(m.dir, "log4j.properties"): cfg.log4jProperties(m.logFile()),
		filepath.Join(m.dir, "logback.xml"):      cfg.logbackXML(m.logFile()),
	}
	for p, content := range files {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return fmt.Errorf("ensemble: %w", err)
		}
	}
	return nil
}

func (m *member) javaArgs(cfg Config, inst installation, marker string) []string {
	args := []string{
		"-Xmx" + cfg.MaxHeap,
		"-XX:+UseSerialGC",
		"-Xshare:auto",
		"-XX:-UsePerfData",
		"-XX:+ExitOnOutOfMemoryError",
		"-Djava.net.preferIPv4Stack=true",
		"-Dzookeeper.log.dir=" + m.dir,
		"-Dzookeeper.log.file=server.log",
		"-Dlog4j.configuration=file:" + filepath.Join(m.dir, "log4j.properties"),
		"-Dlogback.configurationFile=" + filepath.Join(m.dir, "logback.xml"),
		"-Dzookeeper.admin.enableServer=false",
		"-Dzookeeper.jmx.log4j.disable=true",
		"-Dzookeeper.snapshot.trust.empty=true",
		// Lets tools recognise our JVMs in a process listing.
		"-Dzklocks.ensemble=" + marker,
	}
	if !cfg.FullJIT {
		args = append(args, "-XX:TieredStopAtLevel=1")
	}
	args = append(args, cfg.JVMFlags...)
	return append(args, "-cp", strings.Join(inst.classpath, string(os.PathListSeparator)),
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", filepath.Join(m.dir, "zoo.cfg"))
}

// launch starts the member's JVM. Its stdout and stderr go to jvm.out
// (the server log itself goes to server.log).
func (m *member) launch(cfg Config, inst installation, marker string) error {
	out, err := os.OpenFile(m.outFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("ensemble: %w", err)
	}
	defer out.Close() // the child has its own descriptor
	argv := append([]string{inst.java}, m.javaArgs(cfg, inst, marker)...)
	if cfg.Wrap != nil {
		argv = cfg.Wrap(m.id-1, argv)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = m.dir
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(javaEnv(), cfg.MemberEnv[m.id-1]...)
	if err := startProcess(cmd); err != nil {
		return fmt.Errorf("ensemble: start member %d: %w", m.id, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go waitProcess(p)
	m.proc = p
	return nil
}

// javaEnv is the environment without a CLASSPATH that could shadow ours.
func javaEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CLASSPATH=") {
			env = append(env, kv)
		}
	}
	return env
}

// waitProcess reaps one JVM; it is the only goroutine an Ensemble keeps
// per member (see zktest's goleak options).
func waitProcess(p *process) {
	p.err = p.cmd.Wait()
	close(p.done)
}

// signal sends sig to the member's process group and waits up to grace
// for the JVM to exit, then kills it.
func (m *member) signal(sig syscall.Signal, grace time.Duration) error {
	if !m.running() {
		return nil
	}
	if err := signalGroup(m.proc.cmd.Process.Pid, sig); err != nil {
		return fmt.Errorf("ensemble: signal member %d: %w", m.id, err)
	}
	select {
	case <-m.proc.done:
		return nil
	case <-time.After(grace):
	}
	if err := signalGroup(m.proc.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("ensemble: kill member %d: %w", m.id, err)
	}
	select {
	case <-m.proc.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("ensemble: member %d (pid %d) did not exit after SIGKILL", m.id, m.proc.cmd.Process.Pid)
	}
}

// tail returns the last lines of the member's logs, for error messages.
func (m *member) tail(n int) string {
	var b strings.Builder
	for _, f := range []string{m.logFile(), m.outFile()} {
		if t := tailFile(f, n); t != "" {
			fmt.Fprintf(&b, "--- last lines of %s ---\n%s\n", f, t)
		}
	}
	if b.Len() == 0 {
		return "(member wrote no log)"
	}
	return b.String()
}

func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const window = 1 << 20 // poll lines are dropped below; keep room for the rest
	if st, err := f.Stat(); err == nil && st.Size() > window {
		if _, err := f.Seek(-window, io.SeekEnd); err != nil {
			return ""
		}
	}
	data, _ := io.ReadAll(f)
	lines := slices.DeleteFunc(bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")), isPollLine)
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// isPollLine tells the lines a member logs for every four-letter command
// (WaitServing asks srvr every 50ms): in a failed wait they would fill the
// tail and hide the election lines that say why.
func isPollLine(line []byte) bool {
	return bytes.Contains(line, []byte("Processing srvr command")) ||
		bytes.Contains(line, []byte("Processing mntr command"))
}
