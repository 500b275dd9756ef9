// Package fence is the storage side of a fencing token: a small resource
// that remembers the largest token it has seen and refuses a write that
// carries a smaller one.
//
// A lock alone can not protect a resource from a holder that lost the lock
// without noticing: a process paused (GC, SIGSTOP, a swapped-out VM) for
// longer than its session timeout wakes up still believing it holds the
// lock, and writes. Martin Kleppmann's "How to do distributed locking"
// (2016) shows the fix, which Chubby's sequencers (Burrows, OSDI 2006)
// had applied before: every hold carries a number that grows from one
// hold to the next (here Locker.Token(), the czxid of the lock node), the
// resource remembers the largest number it has accepted, and it rejects
// anything older. The lock gives mutual exclusion as long as clients are
// live; the token gives safety when they are not.
//
// A Store keeps its state in one JSON file, so that several processes can
// share it (the fencing demo and the pause test run the stale holder in a
// child process). Writes are serialised with an advisory file lock on
// Unix; elsewhere only within one process. Unfenced mode accepts every
// write, for the contrast: it shows the lost update that fencing prevents.
package fence

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Errors returned by Write, for errors.Is.
var (
	ErrStaleToken = errors.New("fence: stale fencing token")
	ErrNoToken    = errors.New("fence: no fencing token")
)

// Mode says whether a Store checks tokens.
type Mode int

const (
	// Fenced accepts a write only if its token is at least the largest
	// token accepted so far (equal: the same hold writing again).
	Fenced Mode = iota + 1
	// Unfenced accepts every write, like a store that knows nothing of
	// the lock.
	Unfenced
)

func (m Mode) String() string {
	switch m {
	case Fenced:
		return "fenced"
	case Unfenced:
		return "unfenced"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Attempt is one write as the store logged it, accepted or not.
type Attempt struct {
	Token    int64  `json:"token"`
	Writer   string `json:"writer"`
	Value    string `json:"value"`
	Accepted bool   `json:"accepted"`
}

// State is the content of a Store.
type State struct {
	Mode Mode `json:"mode"`
	// Value is the last accepted value.
	Value string `json:"value"`
	// MaxToken is the largest token of an accepted write.
	MaxToken int64 `json:"max_token"`
	// Log lists every write attempt in the order the store saw them.
	Log []Attempt `json:"log"`
}

// Store is a fenced (or unfenced) register kept in a file.
type Store struct {
	path string
	mu   sync.Mutex // serialises the writers of this process
}

// Create makes a new, empty store at path (replacing any file there).
func Create(path string, mode Mode) (*Store, error) {
	if mode != Fenced && mode != Unfenced {
		return nil, fmt.Errorf("fence: invalid mode %v", mode)
	}
	s := &Store{path: path}
	err := s.update(func(st *State) error {
		*st = State{Mode: mode}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Open opens a store that Create made, possibly in another process.
func Open(path string) (*Store, error) {
	s := &Store{path: path}
	if _, err := s.State(); err != nil {
		return nil, err
	}
	return s, nil
}

// Path returns the file the store lives in.
func (s *Store) Path() string { return s.path }

// Write stores value on behalf of writer, holding fencing token token. In
// fenced mode it returns an error wrapping ErrStaleToken when token is
// smaller than the largest token accepted so far, and ErrNoToken when
// token is not positive (Token() is 0 when the lock is not held); the
// rejected attempt is logged and the value is unchanged. In unfenced mode
// every write is accepted.
func (s *Store) Write(token int64, writer, value string) error {
	var rejected error
	err := s.update(func(st *State) error {
		a := Attempt{Token: token, Writer: writer, Value: value}
		switch {
		case st.Mode == Fenced && token <= 0:
			rejected = fmt.Errorf("%w: %s wrote with token %d", ErrNoToken, writer, token)
		case st.Mode == Fenced && token < st.MaxToken:
			rejected = fmt.Errorf("%w: %s wrote with token %d, the store has seen %d", ErrStaleToken, writer, token, st.MaxToken)
		default:
			a.Accepted = true
			st.Value = value
			st.MaxToken = max(st.MaxToken, token)
		}
		st.Log = append(st.Log, a)
		return nil
	})
	if err != nil {
		return err
	}
	return rejected
}

// State reads the store.
func (s *Store) State() (State, error) {
	var st State
	err := s.locked(func() error {
		var err error
		st, err = s.read()
		return err
	})
	return st, err
}

// update runs fn on the state under the locks and writes the result.
func (s *Store) update(fn func(*State) error) error {
	return s.locked(func() error {
		st, err := s.read()
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if err := fn(&st); err != nil {
			return err
		}
		return s.write(st)
	})
}

// locked runs fn holding the process-local mutex and the file lock.
func (s *Store) locked(fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.OpenFile(s.path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("fence: %w", err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return fmt.Errorf("fence: lock %s: %w", f.Name(), err)
	}
	defer unlockFile(f)
	return fn()
}

func (s *Store) read() (State, error) {
	var st State
	data, err := os.ReadFile(s.path)
	if err != nil {
		return st, fmt.Errorf("fence: %w", err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("fence: %s: %w", s.path, err)
	}
	return st, nil
}

// write replaces the file atomically (temporary file, then rename).
func (s *Store) write(st State) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("fence: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), filepath.Base(s.path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("fence: %w", err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("fence: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("fence: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("fence: %w", err)
	}
	return nil
}
