package locktest

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// LogRecord is one record of a lock's operation log, as a LogRecorder
// kept it.
type LogRecord struct {
	Level slog.Level
	Msg   string
	Attrs map[string]slog.Value // by key; a group's keys are prefixed "group."
}

// Str returns the value of key as a string, "" when the record lacks it.
func (r LogRecord) Str(key string) string {
	v, ok := r.Attrs[key]
	if !ok {
		return ""
	}
	return v.String()
}

// Int returns the value of key as an int64, 0 when the record lacks it or
// it is not an integer.
func (r LogRecord) Int(key string) int64 {
	if v, ok := r.Attrs[key]; ok && v.Kind() == slog.KindInt64 {
		return v.Int64()
	}
	return 0
}

// Has reports whether the record has key.
func (r LogRecord) Has(key string) bool { _, ok := r.Attrs[key]; return ok }

func (r LogRecord) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Msg)
	for k, v := range r.Attrs {
		fmt.Fprintf(&b, " %s=%v", k, v)
	}
	return b.String()
}

// LogRecorder keeps every record logged to its Logger, at every level, for
// a test to inspect. It is safe for concurrent use.
type LogRecorder struct {
	mu      sync.Mutex
	recs    []LogRecord
	changed chan struct{} // closed and replaced on every record
}

// NewLogRecorder returns an empty recorder.
func NewLogRecorder() *LogRecorder { return &LogRecorder{changed: make(chan struct{})} }

// Logger returns a logger that records into r.
func (r *LogRecorder) Logger() *slog.Logger { return slog.New(&recHandler{r: r}) }

// Records returns what has been recorded so far, oldest first.
func (r *LogRecorder) Records() []LogRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]LogRecord(nil), r.recs...)
}

// Msgs returns the messages recorded so far, oldest first.
func (r *LogRecorder) Msgs() []string {
	var out []string
	for _, rec := range r.Records() {
		out = append(out, rec.Msg)
	}
	return out
}

// Await waits until n records with message msg have been recorded, or ctx
// ends, and returns the n-th.
func (r *LogRecorder) Await(ctx context.Context, msg string, n int) (LogRecord, error) {
	for {
		r.mu.Lock()
		seen, changed := 0, r.changed
		for _, rec := range r.recs {
			if rec.Msg == msg {
				if seen++; seen == n {
					r.mu.Unlock()
					return rec, nil
				}
			}
		}
		r.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return LogRecord{}, fmt.Errorf("no %d %q records (have %v): %w", n, msg, r.Msgs(), ctx.Err())
		}
	}
}

func (r *LogRecorder) add(rec LogRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	close(r.changed)
	r.changed = make(chan struct{})
}

// recHandler is the slog.Handler behind LogRecorder.Logger.
type recHandler struct {
	r      *LogRecorder
	attrs  []slog.Attr // from WithAttrs, keys already prefixed
	prefix string      // from WithGroup
}

func (h *recHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *recHandler) Handle(_ context.Context, rec slog.Record) error {
	out := LogRecord{Level: rec.Level, Msg: rec.Message, Attrs: map[string]slog.Value{}}
	for _, a := range h.attrs {
		out.Attrs[a.Key] = a.Value
	}
	rec.Attrs(func(a slog.Attr) bool {
		out.Attrs[h.prefix+a.Key] = a.Value.Resolve()
		return true
	})
	h.r.add(out)
	return nil
}

func (h *recHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr(nil), h.attrs...)
	for _, a := range attrs {
		c.attrs = append(c.attrs, slog.Attr{Key: h.prefix + a.Key, Value: a.Value.Resolve()})
	}
	return &c
}

func (h *recHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.prefix = h.prefix + name + "."
	return &c
}
