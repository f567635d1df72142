package cehttp

import (
	"mime"
	"net/url"
	"sync"
	"sync/atomic"
)

// A stream of events has few distinct sources and content types, so the
// results of parsing them are kept. The caches stop growing at
// maxCacheEntries: a sender that varies them per event gets no benefit but
// cannot make the process grow.
const maxCacheEntries = 1024

// boundedCache is a copy-on-write map: reads, the hot path, take no lock
// and box nothing; writes, rare once the cache is warm, copy the map.
type boundedCache[V any] struct {
	entries atomic.Pointer[map[string]V]
	mu      sync.Mutex // serialises writers
}

func (c *boundedCache[V]) get(key string) (V, bool) {
	if m := c.entries.Load(); m != nil {
		v, ok := (*m)[key]
		return v, ok
	}
	var zero V
	return zero, false
}

func (c *boundedCache[V]) put(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.entries.Load()
	if old != nil {
		if _, ok := (*old)[key]; ok || len(*old) >= maxCacheEntries {
			return
		}
	}
	m := make(map[string]V, 1+lenOf(old))
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[key] = v
	c.entries.Store(&m)
}

func lenOf[V any](m *map[string]V) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

var (
	sourceCache    boundedCache[url.URL]
	mediaTypeCache boundedCache[struct{}]
)

// parseURL is url.Parse with a cache. The URL is returned by value, so a
// caller cannot change the cached one (its Userinfo is immutable).
func parseURL(s string) (url.URL, error) {
	if u, ok := sourceCache.get(s); ok {
		return u, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return url.URL{}, err
	}
	sourceCache.put(s, *u)
	return *u, nil
}

// checkMediaType checks an RFC 2046 media type as mime.ParseMediaType does.
func checkMediaType(s string) error {
	if _, ok := mediaTypeCache.get(s); ok {
		return nil
	}
	if _, _, err := mime.ParseMediaType(s); err != nil {
		return err
	}
	mediaTypeCache.put(s, struct{}{})
	return nil
}
