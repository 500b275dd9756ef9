package ensemble

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// composeFile is the part of docker-compose.yml this test reads.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Hostname    string            `yaml:"hostname"`
		Ports       []string          `yaml:"ports"`
		Environment map[string]string `yaml:"environment"`
	} `yaml:"services"`
}

// serverLine matches one ZOO_SERVERS entry: server.N=host:quorum:election;clientPort.
var serverLine = regexp.MustCompile(`^server\.(\d+)=([\w.-]+):(\d+):(\d+);(\d+)$`)

// TestDockerCompose checks, without Docker, that the three services of
// docker-compose.yml describe one ensemble and that the README's
// ZK_SERVERS line (and ErrNoZooKeeper's advice) reach it.
func TestDockerCompose(t *testing.T) {
	raw, err := os.ReadFile("../../docker-compose.yml")
	require.NoError(t, err)
	var cf composeFile
	require.NoError(t, yaml.Unmarshal(raw, &cf))
	require.Len(t, cf.Services, 3, "three services")

	var serversValue string
	hostPortByID := map[int]int{}
	hostByID := map[int]string{}
	for name, svc := range cf.Services {
		assert.Regexp(t, `^zookeeper:3\.(8|9)`, svc.Image, name)
		env := svc.Environment
		assert.Equal(t, "*", env["ZOO_4LW_COMMANDS_WHITELIST"], name)
		id, err := strconv.Atoi(env["ZOO_MY_ID"])
		require.NoError(t, err, "%s: ZOO_MY_ID", name)
		_, dup := hostPortByID[id]
		require.False(t, dup, "ZOO_MY_ID %d used twice", id)
		if serversValue == "" {
			serversValue = env["ZOO_SERVERS"]
		}
		assert.Equal(t, serversValue, env["ZOO_SERVERS"], "%s: every member has the same server list", name)

		host := svc.Hostname
		if host == "" {
			host = name
		}
		hostByID[id] = host
		require.Len(t, svc.Ports, 1, "%s publishes its client port", name)
		parts := strings.Split(svc.Ports[0], ":")
		require.Len(t, parts, 3, "%s: ports entry is 127.0.0.1:host:container", name)
		assert.Equal(t, "127.0.0.1", parts[0], "%s: published on loopback only", name)
		hostPort, err := strconv.Atoi(parts[1])
		require.NoError(t, err)
		hostPortByID[id] = hostPort
		assert.Equal(t, "2181", parts[2], "%s: container client port", name)
	}

	entries := strings.Fields(serversValue)
	require.Len(t, entries, 3, "ZOO_SERVERS lists three servers")
	for _, e := range entries {
		m := serverLine.FindStringSubmatch(e)
		require.NotNil(t, m, "ZOO_SERVERS entry %q", e)
		id, _ := strconv.Atoi(m[1])
		host, ok := hostByID[id]
		require.True(t, ok, "server.%d has a service with ZOO_MY_ID %d", id, id)
		assert.Equal(t, host, m[2], "server.%d names the host of the service with ZOO_MY_ID %d", id, id)
		assert.Equal(t, "2181", m[5], "server.%d client port is the published container port", id)
	}

	ids := make([]int, 0, len(hostPortByID))
	for id := range hostPortByID {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	assert.Equal(t, []int{1, 2, 3}, ids)
	var addrs []string
	for _, id := range ids {
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", hostPortByID[id]))
	}
	want := "ZK_SERVERS=" + strings.Join(addrs, ",")
	assert.Equal(t, "ZK_SERVERS=127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183", want, "ports 2181-2183")

	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	assert.Contains(t, string(readme), want, "README's Docker line matches docker-compose.yml")
	assert.Contains(t, string(readme), "docker compose up -d")
	assert.Contains(t, ErrNoZooKeeper.Error(), want, "ErrNoZooKeeper's advice matches docker-compose.yml")
}
