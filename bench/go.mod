module github.com/flurryid/flurry/bench

go 1.26.0

require (
	github.com/bwmarrin/snowflake v0.3.0
	github.com/flurryid/flurry v0.0.0
	github.com/google/uuid v1.6.0
	github.com/oklog/ulid/v2 v2.1.2
	github.com/rs/xid v1.6.0
	github.com/sony/sonyflake/v2 v2.2.0
	github.com/yitter/idgenerator-go v1.3.3
)

replace github.com/flurryid/flurry => ../
