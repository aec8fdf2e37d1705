package layout

import "errors"

// ErrInvalid is wrapped by every error that reports a malformed layout, layout text,
// node value or ID that does not belong to a layout. The message names the numbers.
var ErrInvalid = errors.New("layout: invalid")

// ErrUnknownPreset is wrapped by Parse and Lookup when a name is not a preset.
var ErrUnknownPreset = errors.New("layout: unknown preset")

// ErrDoesNotFit is wrapped by Plan when the requirements need more bits than the
// budget (63, or 53 for JavaScript-safe IDs).
var ErrDoesNotFit = errors.New("layout: requirements do not fit")
