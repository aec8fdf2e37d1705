module github.com/flurryid/flurry

go 1.26
