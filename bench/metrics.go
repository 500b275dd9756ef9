package bench

import (
	"fmt"
	"strings"
	"time"
)

// MetricReporter is the part of testing.B that ReportMetrics uses.
type MetricReporter interface {
	ReportMetric(n float64, unit string)
}

// Metric units, as they appear in benchmark output (benchstat reads them).
const (
	UnitWatchers      = "watchers/release"
	UnitSelfWatches   = "self-watches/release"
	UnitDeleteWakeups = "delete-wakeups/release"
	UnitWrites        = "writes/acq"
	UnitNotifications = "notifications/acq"
	UnitPackets       = "packets/acq"
	UnitHandoffP50    = "handoff-p50-ns"
	UnitHandoffP99    = "handoff-p99-ns"
	UnitHandoffFloor  = "handoff/floor"
	UnitAcquireP50    = "acquire-p50-ns"
	UnitThroughput    = "acq/s"
)

// ReportMetrics reports a run's figures as custom benchmark metrics. A
// peer run by a driver (Result.External) has no client-side counts: they
// are left out rather than reported as zeros.
func ReportMetrics(b MetricReporter, r Result) {
	b.ReportMetric(r.WatchersPerRelease(), UnitWatchers)
	if !r.External {
		b.ReportMetric(r.SelfWatchesPerRelease(), UnitSelfWatches)
	}
	b.ReportMetric(r.WakeupsOnDeletePerRelease(), UnitDeleteWakeups)
	b.ReportMetric(r.WritesPerAcquisition(), UnitWrites)
	if !r.External {
		b.ReportMetric(r.NotificationsPerAcquisition(), UnitNotifications)
	}
	b.ReportMetric(r.PacketsPerAcquisition(), UnitPackets)
	b.ReportMetric(float64(r.Acquire.P50), UnitAcquireP50)
	if r.Handoff.Count > 0 {
		b.ReportMetric(float64(r.Handoff.P50), UnitHandoffP50)
		b.ReportMetric(float64(r.Handoff.P99), UnitHandoffP99)
		b.ReportMetric(r.HandoffFloorRatio(), UnitHandoffFloor)
	}
	b.ReportMetric(r.Throughput(), UnitThroughput)
}

// Line is a one-line summary of a run, for logs.
func (r Result) Line() string {
	return fmt.Sprintf("%-16s n=%-3d acq=%-5d %7.1f acq/s  acquire p50 %v  handoff p50 %v p99 %v (%.2fx floor; split p50 release %v, server %v, wake %v)  "+
		"watchers/release %.2f (+%.2f self; by type %s)  writes/acq %.2f  notifications/acq %.2f  packets/acq %.1f",
		r.Variant, r.Contenders, r.Acquisitions, r.Throughput(), round(r.Acquire.P50),
		round(r.Handoff.P50), round(r.Handoff.P99), r.HandoffFloorRatio(), round(r.HandoffRelease.P50), round(r.HandoffServer.P50), round(r.HandoffWake.P50),
		r.WatchersPerRelease(), r.SelfWatchesPerRelease(), r.watchTypes(), r.WritesPerAcquisition(),
		r.NotificationsPerAcquisition(), r.PacketsPerAcquisition())
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= 100*time.Millisecond:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}

// watchTypes lists the watchers fired by event type, for logs.
func (r Result) watchTypes() string {
	var parts []string
	for _, k := range watchFiredKeys {
		if n := r.Server.WatchersByType[k]; n != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", strings.TrimSuffix(strings.TrimPrefix(k, "zk_sum_node_"), "_watch_count"), n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}
