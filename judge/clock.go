package judge

import (
	"context"
	"time"
)

// Clock is the judge's view of time. Tests inject a fake one so that
// backoff, Retry-After, budgets and cache expiry run without real waits.
type Clock interface {
	Now() time.Time
	// Sleep waits for d, or returns ctx.Err() as soon as ctx ends.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
