package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/flurryid/flurry/internal/engines"
)

// DefaultReload is how often the Leaf and tinyid modes re-read their tag lists and
// tokens: every minute, as Leaf (SegmentIDGenImpl.updateCacheFromDbAtEveryMinute)
// and tinyid (TinyIdTokenServiceImpl.refresh) do.
const DefaultReload = time.Minute

// DefaultTinyIDBatchMax caps tinyid's batchSize, as tinyid's batch.size.max.
const DefaultTinyIDBatchMax = 100_000

// LeafCompat serves every tag of Meituan Leaf's leaf_alloc on Leaf's routes, as a
// Leaf server does: tags added to the table while running are served after the
// next reload, tags removed stop being served.
type LeafCompat struct {
	// Segment gives the stores (stores: [mysql://...?table=leaf_alloc], add
	// &schema=leaf for an account with only SELECT and UPDATE on the table) and the
	// allocators' tuning (runway, target, max_step, fetch_timeout, prefetch). Tag and
	// create are not allowed: every tag of the stores is served.
	Segment *Segment `yaml:"segment"`
	// Reload is how often the tag list is read again (a Go duration). Empty means
	// DefaultReload.
	Reload Duration `yaml:"reload"`
}

// TinyIDCompat serves didi tinyid's routes (/tinyid/id/nextId ...) on tinyid's
// tables: every biz type of tiny_id_info, with tokens from tiny_id_token.
type TinyIDCompat struct {
	// Stores are tinyid databases, one per tinyid datasource, each as
	// mysql://user:pass@host:3306/db?table=tiny_id_info. Required.
	Stores []string `yaml:"stores"`
	// Prefix is tinyid's server.context-path. Empty means /tinyid.
	Prefix string `yaml:"prefix"`
	// BatchSizeMax caps batchSize (tinyid's batch.size.max). Zero means
	// DefaultTinyIDBatchMax.
	BatchSizeMax int `yaml:"batch_size_max"`
	// Reload is how often tokens and biz types are read again. Empty means
	// DefaultReload.
	Reload Duration `yaml:"reload"`
	// Runway, Target, FetchTimeout, MaxStep and Prefetch tune the allocators as in
	// a segment namespace.
	Runway       Duration `yaml:"runway"`
	Target       Duration `yaml:"target"`
	FetchTimeout Duration `yaml:"fetch_timeout"`
	MaxStep      int64    `yaml:"max_step"`
	Prefetch     float64  `yaml:"prefetch"`
}

func (k *checker) compat(c *Config) {
	if l := c.Leaf; l != nil {
		p := []string{"leaf"}
		k.duration(append(p, "reload"), l.Reload, false)
		if l.Segment == nil || len(l.Segment.Stores) == 0 {
			k.add(append(p, "segment", "stores"), "give the Leaf databases: stores: [mysql://user:pass@host:3306/leaf?table=leaf_alloc]")
		} else {
			if l.Segment.Tag != "" || l.Segment.Create != nil {
				k.add(append(p, "segment"), "tag and create do not apply: every tag of the stores is served")
			}
			s := *l.Segment
			s.Tag = "leaf"
			k.segment(append(p, "segment"), "leaf", &s)
		}
	}
	if t := c.TinyID; t != nil {
		p := []string{"tinyid"}
		k.duration(append(p, "reload"), t.Reload, false)
		if len(t.Stores) == 0 {
			k.add(append(p, "stores"), "give the tinyid databases: stores: [mysql://user:pass@host:3306/tinyid?table=tiny_id_info]")
		}
		for i, u := range t.Stores {
			k.store(append(p, "stores", fmt.Sprint(i)), u, engines.SegmentStore, []string{"postgres", "postgresql", "mysql", "sqlite"})
		}
		if t.Prefix != "" && (!strings.HasPrefix(t.Prefix, "/") || strings.HasSuffix(t.Prefix, "/") || strings.ContainsAny(t.Prefix, " {}")) {
			k.add(append(p, "prefix"), "%q: give a path such as /tinyid (a leading slash, no trailing one)", t.Prefix)
		}
		if t.BatchSizeMax < 0 || t.BatchSizeMax > 10_000_000 {
			k.add(append(p, "batch_size_max"), "%d is out of range 0..10,000,000", t.BatchSizeMax)
		}
		s := &Segment{Runway: t.Runway, Target: t.Target, FetchTimeout: t.FetchTimeout, MaxStep: t.MaxStep, Prefetch: t.Prefetch, Tag: "tinyid"}
		k.segment(p, "tinyid", s)
	}
}
