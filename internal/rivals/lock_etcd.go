package rivals

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
)

// EtcdLock is etcd's own lock recipe, concurrency.Mutex, over a Session
// (a lease the client keeps alive). Waiters queue by the create revision
// of their key and each watches the key just before its own, so a release
// wakes one waiter: the same queue as ZooKeeper's sequential lock, with a
// lease where ZooKeeper has a session.
//
// The hold lasts while the lease does: if the client cannot renew it for
// TTL (frozen, cut off), the servers delete the key and the next waiter
// gets the lock while this one may still think it holds it. Token is the
// fence for that case: the store revision at which this holder learned it
// held the lock, which is larger than every earlier holder's (an earlier
// holder's key had to be deleted first, a later revision).
type EtcdLock struct {
	client *clientv3.Client
	pfx    string
	ttl    int // seconds, as etcd's leases count

	session *concurrency.Session
	mutex   *concurrency.Mutex // the current hold, nil when none
	token   int64
}

// NewEtcdLock connects a client of its own to the cluster and opens a
// session with a lease of TTL (rounded up to whole seconds; default 10 s)
// for the lock named name.
func NewEtcdLock(ctx context.Context, endpoints []string, name string, o Options) (*EtcdLock, error) {
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("rivals: etcd client: %w", err)
	}
	l := &EtcdLock{client: c, pfx: "/zklocks-rivals/" + name, ttl: int((o.ttl() + time.Second - 1) / time.Second)}
	if err := l.newSession(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return l, nil
}

// newSession grants the lease under ctx itself: concurrency.NewSession
// would grant it under the context that also bounds its keep-alives.
func (l *EtcdLock) newSession(ctx context.Context) error {
	lease, err := l.client.Grant(ctx, int64(l.ttl))
	if err != nil {
		return ctxErr(ctx, "rivals: etcd lease", err)
	}
	s, err := concurrency.NewSession(l.client, concurrency.WithLease(lease.ID))
	if err != nil {
		return fmt.Errorf("rivals: etcd session: %w", err)
	}
	l.session = s
	return nil
}

// Lock waits for the lock. A session whose lease has ended (the servers
// let it go) is replaced first.
func (l *EtcdLock) Lock(ctx context.Context) error {
	if l.mutex != nil {
		return ErrHeld
	}
	select {
	case <-l.session.Done():
		l.session.Close()
		if err := l.newSession(ctx); err != nil {
			return err
		}
	default:
	}
	m := concurrency.NewMutex(l.session, l.pfx)
	if err := m.Lock(ctx); err != nil {
		// Mutex.Lock deletes its key when its wait fails, but not when the
		// put itself was interrupted: the put may have reached the servers
		// and would queue a waiter nobody serves until the lease ends.
		if k := m.Key(); k != "" && k != "\x00" {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseAfterCancel)
			_, _ = l.client.Delete(dctx, k)
			cancel()
		}
		return ctxErr(ctx, "rivals: etcd lock", err)
	}
	l.mutex, l.token = m, m.Header().Revision
	return nil
}

// Unlock deletes the key only if it is still this hold's (same create
// revision), so that a holder whose lease ran out learns it had lost the
// lock instead of getting a silent success.
func (l *EtcdLock) Unlock(ctx context.Context) error {
	m := l.mutex
	if m == nil {
		return fmt.Errorf("rivals: etcd unlock: %w", ErrNotHeld)
	}
	resp, err := l.client.Txn(ctx).If(m.IsOwner()).Then(clientv3.OpDelete(m.Key())).Commit()
	if err != nil {
		return ctxErr(ctx, "rivals: etcd unlock", err)
	}
	l.mutex, l.token = nil, 0
	if !resp.Succeeded {
		return fmt.Errorf("rivals: etcd unlock: the lease ended and the servers deleted the key: %w", ErrNotHeld)
	}
	return nil
}

// Token is the fencing token of the current hold, 0 when none.
func (l *EtcdLock) Token() int64 { return l.token }

// Close releases a hold, revokes the lease and closes the client.
func (l *EtcdLock) Close() error {
	var errs []error
	if l.mutex != nil {
		ctx, cancel := context.WithTimeout(context.Background(), releaseAfterCancel)
		if err := l.Unlock(ctx); err != nil && !errors.Is(err, ErrNotHeld) {
			errs = append(errs, err)
		}
		cancel()
	}
	// A lease the servers have already ended cannot be revoked; that is
	// the lost hold Unlock reported, not a failure to close.
	if err := l.session.Close(); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		errs = append(errs, err)
	}
	errs = append(errs, l.client.Close())
	return errors.Join(errs...)
}
