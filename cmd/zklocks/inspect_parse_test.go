package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// These tests read text: a wchp answer as ZooKeeper 3.8 prints it, and
// node names. The commands' behaviour against a real ensemble is tested in
// inspect_test.go.

func TestParseWchpAddsUpDataAndChildWatches(t *testing.T) {
	// Data watches, a blank line, then child watches; a path can appear in
	// both sections, and the same session in several.
	const member1 = "/locks/a/_c_x-lock-0000000000\n\t0x100\n\t0x200\n/locks/a\n\t0x100\n\n/locks/a\n\t0x300\n"
	const member2 = "/locks/a/_c_x-lock-0000000000\r\n\t0x400\r\n\r\n"
	tab := watchTable{}
	parseWchp(member1, tab)
	parseWchp(member2, tab)
	parseWchp("", tab)
	assert.Equal(t, watchTable{
		"/locks/a/_c_x-lock-0000000000": {"0x100", "0x200", "0x400"},
		"/locks/a":                      {"0x100", "0x300"},
	}, tab)
}

func TestParseConfFindsTheMemberAndTheEnsemble(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      confInfo
	}{
		{"a participant of three (3.8, static config)",
			"clientPort=2181\nserverId=2\nmembership: \nserver.1=10.0.0.1:2888:3888:participant\n" +
				"server.2=10.0.0.2:2888:3888:participant\nserver.3=10.0.0.3:2888:3888:participant\nversion=0\n",
			confInfo{id: "2", members: []string{"1", "2", "3"}}},
		{"an observer, client addresses in the server lines",
			"serverId=4\r\nserver.1=a:2888:3888:participant;0.0.0.0:2181\r\nserver.4=d:2888:3888:observer;0.0.0.0:2181\r\n",
			confInfo{id: "4", members: []string{"1", "4"}}},
		{"standalone: it is the only member", "clientPort=2181\nserverId=0\n",
			confInfo{id: "0", members: []string{"0"}}},
		{"no answer worth reading", "", confInfo{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, parseConf(tc.out))
		})
	}
}

func TestApplyWatchesLeavesPartialCountsUnknown(t *testing.T) {
	tab := watchTable{"/l": {"0x1"}, "/l/n-0000000001": {"0x2", "0x3"}}
	lock := func() lockView {
		return lockView{Path: "/l", Exists: true, Layout: ptrTo(layoutChildren),
			Contenders: []contenderView{{Node: "/l/n-0000000001"}, {Node: "/l/n-0000000002"}}}
	}
	l := lock()
	applyWatches(&l, tab, true)
	assert.Equal(t, 3, *l.WatchersTotal, "the path's own watch and its nodes'")
	assert.Equal(t, 2, *l.Contenders[0].Watchers)
	assert.Equal(t, 0, *l.Contenders[1].Watchers)
	assert.Equal(t, []string{}, l.Contenders[1].WatcherSessions)

	l = lock()
	applyWatches(&l, tab, false)
	assert.Nil(t, l.WatchersTotal)
	assert.Nil(t, l.Contenders[0].Watchers)
}

func TestClassifyByNameThenData(t *testing.T) {
	now := int64(10_000)
	for _, tc := range []struct {
		name, node, data, kind string
		naive                  bool
	}{
		{"zklocks sequential", "_c_0123456789abcdef0123456789abcdef-lock-0000000007", "", kindSequential, false},
		{"zklocks reentrant", "_c_0123456789abcdef0123456789abcdef-lock-0000000007", `{"owner":"o","mode":"memory"}`, kindReentrant, false},
		{"zklocks timeout", "_c_0123456789abcdef0123456789abcdef-lock-0000000007", "lease=900ms held", kindTimeout, false},
		{"counter wrapped", "_c_0123456789abcdef0123456789abcdef-lock--000000005", "", kindSequential, false},
		{"curator", "_c_1b4e28ba-2fa1-11d2-883f-0016d3cca427-lock-0000000001", "10.0.0.7", kindCurator, false},
		{"curator data does not matter", "_c_1b4e28ba-2fa1-11d2-883f-0016d3cca427-lock-0000000001", "lease=900ms held", kindCurator, false},
		{"kazoo", "0123456789abcdef0123456789abcdef__lock__0000000003", "", kindKazoo, false},
		{"kazoo read lock", "0123456789abcdef0123456789abcdef__rlock__0000000003", "", kindUnknown, false},
		{"go-zookeeper unprotected", "lock-0000000003", "", kindUnknown, false},
		{"zookeeper recipe", "x-72057594037927936-0000000003", "", kindUnknown, false},
		{"uppercase guid", "_c_0123456789ABCDEF0123456789ABCDEF-lock-0000000007", "", kindUnknown, false},
		{"naive", "orders", "3fa2c0ffee", kindNaive, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := contenderView{MtimeMs: 9_000}
			classify(&c, tc.node, []byte(tc.data), tc.naive, &now)
			assert.Equal(t, tc.kind, c.Kind)
			assert.Equal(t, tc.kind == kindReentrant, c.Owner != nil)
			assert.Equal(t, tc.kind == kindTimeout, c.Lease != nil)
		})
	}
}

// A holder asked to let go shows it, in the JSON and in the text.
func TestClassifyShowsARevocationRequest(t *testing.T) {
	c := contenderView{}
	classify(&c, "_c_0123456789abcdef0123456789abcdef-lock-0000000000", []byte("__REVOKE__"), false, nil)
	assert.True(t, c.RevokeRequested)
	assert.Contains(t, describe(c), "revocation requested")
	c = contenderView{}
	classify(&c, "_c_0123456789abcdef0123456789abcdef-lock-0000000000", []byte("__REVOKE__ later"), false, nil)
	assert.False(t, c.RevokeRequested, "only the exact request")
}

func TestLeaseExpiresAtMtimePlusLengthByTheEnsembleClock(t *testing.T) {
	node := "_c_0123456789abcdef0123456789abcdef-lock-0000000000"
	for _, tc := range []struct {
		data      string
		now       *int64
		remaining *int64
		expired   *bool
	}{
		{"lease=900ms held", ptrTo(int64(1_899)), ptrTo(int64(1)), ptrTo(false)},
		{"lease=900ms held", ptrTo(int64(1_900)), ptrTo(int64(0)), ptrTo(true)}, // a waiter evicts at equality
		{"lease=900ms held", ptrTo(int64(5_000)), ptrTo(int64(-3_100)), ptrTo(true)},
		{"lease=900ms held", nil, nil, nil},            // no clock: unknown
		{"lease=900ms", ptrTo(int64(5_000)), nil, nil}, // not stamped: not running
	} {
		c := contenderView{MtimeMs: 1_000}
		classify(&c, node, []byte(tc.data), false, tc.now)
		assert.Equal(t, tc.remaining, c.Lease.RemainingMs, "%s at %v", tc.data, tc.now)
		assert.Equal(t, tc.expired, c.Lease.Expired, "%s at %v", tc.data, tc.now)
	}
}
