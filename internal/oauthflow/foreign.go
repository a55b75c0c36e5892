package oauthflow

import "context"

// Conv converts between StoredToken and another package's token type T
// that has StoredToken's fields, field for field (a pointer conversion
// each way, which the other package writes so that the compiler checks
// the fields).
type Conv[T any] struct {
	To   func(*T) *StoredToken
	From func(*StoredToken) *T
}

// ForeignStore is a store of T tokens, as another package declares its
// token store.
type ForeignStore[T any] interface {
	Load(ctx context.Context, key string) (*T, error)
	Save(ctx context.Context, key string, t *T) error
}

// ForeignUpdater is a ForeignStore that can lock a key among processes,
// as Updater does.
type ForeignUpdater[T any] interface {
	ForeignStore[T]
	Update(ctx context.Context, key string, fn func(context.Context, *T) (*T, error)) error
}

// Outward is a Store of this package as a ForeignStore of T.
type Outward[T any] struct {
	S Store
	C Conv[T]
}

// Load loads from S.
func (o Outward[T]) Load(ctx context.Context, key string) (*T, error) {
	t, err := o.S.Load(ctx, key)
	return o.C.From(t), err
}

// Save saves to S.
func (o Outward[T]) Save(ctx context.Context, key string, t *T) error {
	return o.S.Save(ctx, key, o.C.To(t))
}

// OutwardUpdater is an Updater of this package as a ForeignUpdater of T.
type OutwardUpdater[T any] struct{ Outward[T] }

// Update runs fn under S's lock.
func (o OutwardUpdater[T]) Update(ctx context.Context, key string, fn func(context.Context, *T) (*T, error)) error {
	return o.S.(Updater).Update(ctx, key, func(ctx context.Context, cur *StoredToken) (*StoredToken, error) {
		next, err := fn(ctx, o.C.From(cur))
		return o.C.To(next), err
	})
}

// Inward returns s as a Store of this package: nil for nil (the handler
// then keeps tokens in memory), the Store inside an Outward, and an
// Updater when s is a ForeignUpdater.
func Inward[T any](s ForeignStore[T], c Conv[T]) Store {
	switch s := s.(type) {
	case nil:
		return nil
	case Outward[T]:
		return s.S
	case OutwardUpdater[T]:
		return s.S
	case ForeignUpdater[T]:
		return inwardUpdater[T]{inward[T]{s, c}, s}
	default:
		return inward[T]{s, c}
	}
}

// inward is a ForeignStore as a Store.
type inward[T any] struct {
	s ForeignStore[T]
	c Conv[T]
}

func (a inward[T]) Load(ctx context.Context, key string) (*StoredToken, error) {
	t, err := a.s.Load(ctx, key)
	return a.c.To(t), err
}

func (a inward[T]) Save(ctx context.Context, key string, t *StoredToken) error {
	return a.s.Save(ctx, key, a.c.From(t))
}

// inwardUpdater is a ForeignUpdater as an Updater.
type inwardUpdater[T any] struct {
	inward[T]
	u ForeignUpdater[T]
}

func (a inwardUpdater[T]) Update(ctx context.Context, key string, fn func(context.Context, *StoredToken) (*StoredToken, error)) error {
	return a.u.Update(ctx, key, func(ctx context.Context, cur *T) (*T, error) {
		next, err := fn(ctx, a.c.To(cur))
		return a.c.From(next), err
	})
}
