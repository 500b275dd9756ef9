package ensemble

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// ErrNoZooKeeper means that no ZooKeeper installation (or no java to run it)
// was found. Its message says how to get one.
var ErrNoZooKeeper = errors.New("ensemble: no ZooKeeper installation found; to get one, run `make test` " +
	"(it installs the Debian package when it can), or `sudo apt-get install zookeeper`, " +
	"or start the Docker ensemble with `docker compose up -d` and set " +
	"ZK_SERVERS=127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183")

// Where Start looks for an installation when neither Config.Home nor
// ZOOKEEPER_HOME is set. They are variables so that a test can pretend
// that nothing is installed.
var (
	debianJarDir  = "/usr/share/java"
	homebrewHomes = []string{"/opt/homebrew/opt/zookeeper/libexec", "/usr/local/opt/zookeeper/libexec"}
)

// debianJars are the jars of Debian's libzookeeper-java and of the logging
// backend it is built for. zookeeper.jar's manifest names most of its
// dependencies; listing them again costs nothing and survives a manifest
// that forgets one. Only zookeeper.jar is required.
var debianJars = []string{
	"zookeeper.jar", "zookeeper-jute.jar",
	"slf4j-api.jar", "slf4j-log4j12.jar", "log4j-1.2.jar",
	"netty-buffer.jar", "netty-codec.jar", "netty-common.jar", "netty-handler.jar",
	"netty-resolver.jar", "netty-transport.jar", "netty-transport-native-epoll.jar",
	"netty-transport-native-unix-common.jar",
	"metrics-core.jar", "snappy-java.jar", "commons-cli.jar", "commons-io.jar",
}

// installation is what it takes to run a QuorumPeerMain.
type installation struct {
	where     string // for messages
	classpath []string
	java      string
}

// findInstallation locates the jars and the java executable. An explicit
// location (Config.Home, then ZOOKEEPER_HOME) is the only one tried when it
// is set, so a wrong setting is reported instead of silently ignored.
func findInstallation(cfg Config) (installation, error) {
	var inst installation
	var err error
	switch home := os.Getenv("ZOOKEEPER_HOME"); {
	case cfg.Home != "":
		inst, err = jarsIn(cfg.Home, "Config.Home")
	case home != "":
		inst, err = jarsIn(home, "ZOOKEEPER_HOME")
	default:
		inst, err = findDefault()
	}
	if err != nil {
		return installation{}, err
	}
	inst.java, err = findJava(cfg.Java)
	return inst, err
}

func findDefault() (installation, error) {
	if fileExists(filepath.Join(debianJarDir, "zookeeper.jar")) {
		inst := installation{where: debianJarDir}
		for _, j := range debianJars {
			if p := filepath.Join(debianJarDir, j); fileExists(p) {
				inst.classpath = append(inst.classpath, p)
			}
		}
		return inst, nil
	}
	for _, h := range homebrewHomes {
		if inst, err := jarsIn(h, "Homebrew"); err == nil {
			return inst, nil
		}
	}
	tried := append([]string{debianJarDir}, homebrewHomes...)
	return installation{}, fmt.Errorf("no zookeeper jar in %s and ZOOKEEPER_HOME is not set: %w",
		strings.Join(tried, ", "), ErrNoZooKeeper)
}

// jarsIn collects the jars of an Apache binary tarball (lib/*.jar, and the
// main jar at the top in old releases) or a Homebrew install (libexec/lib).
func jarsIn(home, source string) (installation, error) {
	inst := installation{where: home}
	hasServer := false
	for _, dir := range []string{home, filepath.Join(home, "lib"), filepath.Join(home, "libexec", "lib")} {
		jars, _ := filepath.Glob(filepath.Join(dir, "*.jar"))
		sort.Strings(jars)
		for _, j := range jars {
			base := filepath.Base(j)
			if base == "zookeeper.jar" || (strings.HasPrefix(base, "zookeeper-3") && !strings.Contains(base, "sources")) {
				hasServer = true
			}
			inst.classpath = append(inst.classpath, j)
		}
	}
	if !hasServer {
		return installation{}, fmt.Errorf("%s=%s holds no zookeeper jar (looked in it, lib/ and libexec/lib/): %w",
			source, home, ErrNoZooKeeper)
	}
	return inst, nil
}

func findJava(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		if p := filepath.Join(jh, "bin", "java"); fileExists(p) {
			return p, nil
		}
	}
	p, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("java not found on PATH or in JAVA_HOME (a JRE is needed, e.g. apt-get install default-jre-headless): %w",
			ErrNoZooKeeper)
	}
	return p, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// Classpath returns the jars a member runs with and the java that runs
// them, found as Start finds them (cfg.Home, ZOOKEEPER_HOME, then the
// default places): for ZooKeeper's own tools, TxnLogToolkit say.
func Classpath(cfg Config) (jars []string, java string, err error) {
	inst, err := findInstallation(cfg)
	if err != nil {
		return nil, "", err
	}
	return inst.classpath, inst.java, nil
}
