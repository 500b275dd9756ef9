package rivals

import "time"

// Options tune a rival lock; the zero value is the default.
type Options struct {
	// TTL is how long a hold outlives a holder that stops renewing it or
	// stops answering: etcd's lease (whole seconds), Redis's and Redlock's
	// key expiry. PostgreSQL ties its locks to the session instead and
	// ignores it. Default 10 s.
	TTL time.Duration
	// RetryPause is the pause between two attempts of a Redis or Redlock
	// waiter, which have no way to be told that the lock is free; each
	// pause is drawn between half and one and a half of it. Default 10 ms.
	RetryPause time.Duration
}

func (o Options) ttl() time.Duration {
	if o.TTL <= 0 {
		return defaultTTL
	}
	return o.TTL
}

func (o Options) retryPause() time.Duration {
	if o.RetryPause <= 0 {
		return defaultRetryPause
	}
	return o.RetryPause
}
