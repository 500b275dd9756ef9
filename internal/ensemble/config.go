package ensemble

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Config describes the ensemble that Start launches. Zero fields take the
// defaults listed on each field, except ForceSync: a zero Config runs without
// fsync, so begin from DefaultConfig to get the production-like setting.
type Config struct {
	// Size is the number of members; default 3. Size 1 runs a standalone
	// server (srvr reports Mode: standalone).
	Size int
	// TickTime is ZooKeeper's basic time unit; default 200ms. The servers
	// accept session timeouts from 2 ticks up to MaxSessionTimeout.
	TickTime time.Duration
	// ForceSync makes every member fsync its transaction log before it
	// acknowledges a write (zoo.cfg forceSync=yes). DefaultConfig sets it.
	ForceSync bool
	// InitLimit and SyncLimit are in ticks; defaults 10 and 10.
	InitLimit, SyncLimit int
	// MaxSessionTimeout is the longest session timeout a client may ask
	// for; default 60s.
	MaxSessionTimeout time.Duration
	// MaxHeap is the JVM's -Xmx value; default "256m".
	MaxHeap string
	// FullJIT runs each JVM with both JIT compilers. Off by default: the
	// quick compiler alone (-XX:TieredStopAtLevel=1) brings a member up
	// about a second sooner, which is what tests want; a long benchmark
	// may prefer the optimising compiler's steady-state speed.
	FullJIT bool
	// JVMFlags are extra flags passed to java before the main class.
	JVMFlags []string
	// LogLevel is the server log level (log4j/logback name); default INFO.
	LogLevel string
	// Home is a ZooKeeper installation directory to use instead of looking
	// at ZOOKEEPER_HOME and the usual install locations.
	Home string
	// Java is the java executable; default $JAVA_HOME/bin/java, else the
	// java found on PATH.
	Java string
	// BaseDir is where the ensemble's temporary directory is created;
	// default os.TempDir().
	BaseDir string
	// MemberEnv adds environment variables to the JVM of the members it
	// names (by index): say, libfaketime's LD_PRELOAD and FAKETIME, for a
	// member whose clock is wrong.
	MemberEnv map[int][]string
	// ProxiedLinks routes every connection between two members through a
	// proxy in this process, so that Partition, Heal and SlowLink can cut
	// and slow the links between members (see links.go). The ensemble
	// then lives only as long as this process.
	ProxiedLinks bool
	// LastJoinsLate starts the member with the largest id only once the
	// others have elected a leader among them, so that it joins as a
	// follower. Members with the same transactions elect the largest id,
	// so without it that member leads every fresh ensemble; a test that
	// needs another leader would otherwise have to kill it and wait for an
	// election, the step the proxies made slow (see redial.go).
	LastJoinsLate bool
	// StartTimeout bounds Start (when its context has no earlier deadline)
	// and Restart; default 60s.
	StartTimeout time.Duration

	// The seam of ensembles whose members do not share this process's
	// network (internal/netns runs each member in a network namespace of
	// its own). All three are unset for the loopback ensemble.

	// Hosts, when set, holds the address of each member (by index): the
	// member binds its client, quorum and election ports there, and the
	// others reach it there. Default: 127.0.0.1 for every member.
	Hosts []string
	// Wrap, when set, is given the command line of member i's JVM (the
	// java executable first) and returns the one to run instead, say the
	// same command behind `ip netns exec <namespace>`. The wrapper must
	// exec the JVM in the process it was started as (ip netns exec and
	// nsenter do), so that the member keeps its process group and the
	// parent-death signal.
	Wrap func(i int, argv []string) []string
	// Dial, when set, is how this process reaches the members' client
	// ports for the four-letter words it polls with (srvr, mntr); default
	// a plain dial.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// DefaultConfig returns the configuration the tests use: three members,
// 200ms ticks and fsync on.
func DefaultConfig() Config {
	return Config{ForceSync: true}.withDefaults()
}

func (c Config) withDefaults() Config {
	if c.Size <= 0 {
		c.Size = 3
	}
	if c.TickTime <= 0 {
		c.TickTime = 200 * time.Millisecond
	}
	if c.InitLimit <= 0 {
		c.InitLimit = 10
	}
	if c.SyncLimit <= 0 {
		c.SyncLimit = 10
	}
	if c.MaxSessionTimeout <= 0 {
		c.MaxSessionTimeout = 60 * time.Second
	}
	if c.MaxHeap == "" {
		c.MaxHeap = "256m"
	}
	if c.LogLevel == "" {
		c.LogLevel = "INFO"
	}
	if c.BaseDir == "" {
		c.BaseDir = os.TempDir()
	}
	if c.Dial == nil {
		c.Dial = (&net.Dialer{}).DialContext
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = 60 * time.Second
	}
	return c
}

// zooCfg renders the zoo.cfg of member m (0-based) of the ensemble.
func (c Config) zooCfg(m *member, all []*member) string {
	yesNo := map[bool]string{true: "yes", false: "no"}
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=%d\n", c.TickTime.Milliseconds())
	fmt.Fprintf(&b, "initLimit=%d\n", c.InitLimit)
	fmt.Fprintf(&b, "syncLimit=%d\n", c.SyncLimit)
	fmt.Fprintf(&b, "dataDir=%s\n", filepath.Join(m.dir, "data"))
	fmt.Fprintf(&b, "clientPort=%d\n", m.clientPort)
	fmt.Fprintf(&b, "clientPortAddress=%s\n", m.host)
	fmt.Fprintf(&b, "maxSessionTimeout=%d\n", c.MaxSessionTimeout.Milliseconds())
	// The benchmark opens one session per contender from one address.
	b.WriteString("maxClientCnxns=0\n")
	fmt.Fprintf(&b, "forceSync=%s\n", yesNo[c.ForceSync])
	b.WriteString("4lw.commands.whitelist=*\n")
	b.WriteString("admin.enableServer=false\n")
	for _, o := range all {
		quorum, election := o.quorumPort, o.electionPort
		if via, ok := m.via[o.id]; ok {
			quorum, election = via[0], via[1] // the proxies of the way m→o
		}
		fmt.Fprintf(&b, "server.%d=%s:%d:%d\n", o.id, o.host, quorum, election)
	}
	return b.String()
}

// log4jProperties configures the log4j 1.x backend (Debian's package and
// tarballs before 3.8) to write everything to one file in the member dir.
func (c Config) log4jProperties(logFile string) string {
	return fmt.Sprintf(`log4j.rootLogger=%s, FILE
log4j.appender.FILE=org.apache.log4j.FileAppender
log4j.appender.FILE.File=%s
log4j.appender.FILE.Append=true
log4j.appender.FILE.layout=org.apache.log4j.PatternLayout
log4j.appender.FILE.layout.ConversionPattern=%%d{ISO8601} %%-5p [%%t] %%c{1}: %%m%%n
`, c.LogLevel, logFile)
}

// logbackXML does the same for the logback backend of the 3.8+ tarballs.
func (c Config) logbackXML(logFile string) string {
	return fmt.Sprintf(`<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>%s</file>
    <append>true</append>
    <encoder><pattern>%%d{ISO8601} %%-5level [%%thread] %%logger{0}: %%msg%%n</pattern></encoder>
  </appender>
  <root level="%s"><appender-ref ref="FILE"/></root>
</configuration>
`, logFile, c.LogLevel)
}
