package engine

import (
	"context"
	"encoding/json"
	"fmt"
)

// purgeSubject removes the messages of subject from stream and returns how
// many there were. jetstream.Stream.Purge does not return the count, which
// the accounting needs, so this makes the API request itself.
func (e *Engine) purgeSubject(ctx context.Context, stream, subject string) (uint64, error) {
	req, err := json.Marshal(struct {
		Filter string `json:"filter"`
	}{subject})
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.PublishTimeout)
	defer cancel()
	msg, err := e.nc.RequestWithContext(ctx, "$JS.API.STREAM.PURGE."+stream, req)
	if err != nil {
		return 0, fmt.Errorf("purging %s: %w", subject, err)
	}
	var resp struct {
		Success bool   `json:"success"`
		Purged  uint64 `json:"purged"`
		Error   *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return 0, fmt.Errorf("purging %s: %w", subject, err)
	}
	if resp.Error != nil {
		return 0, fmt.Errorf("purging %s: %s", subject, resp.Error.Description)
	}
	return resp.Purged, nil
}
