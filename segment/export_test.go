package segment

// AllocatorCheckTagName is New's copy of package segmentstore's tag name check, for
// TestTagNameChecksAgree.
var AllocatorCheckTagName = checkTagName
