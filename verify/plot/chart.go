package plot

import (
	"errors"
	"fmt"
	"io"
)

// Point is one sample of a series.
type Point struct {
	X, Y float64
}

// Series is one line of a chart. Points are joined in the order given; a caller
// wanting a line over time sorts them by X. Points with a NaN or infinite coordinate
// are skipped and break the line.
type Series struct {
	// Name labels the series in the legend. An empty name leaves it out of the legend.
	Name   string
	Points []Point
}

// Band is a shaded vertical stripe from X=From to X=To, such as the time a fault
// was active. Its label is written at the top of the stripe.
type Band struct {
	From, To float64
	Label    string
}

// Chart describes one line chart. The zero value draws an empty frame.
type Chart struct {
	// Title is written above the plot area; XLabel below the X axis; YLabel
	// vertically left of the Y axis. Any may be empty.
	Title, XLabel, YLabel string
	// Series are drawn in order, each in its own colour from a fixed palette.
	Series []Series
	// Shade are drawn under the series, in a light tint of a fixed palette.
	Shade []Band
}

// Smallest image WritePNG accepts: smaller leaves no room for the plot area.
const (
	MinWidth  = 160
	MinHeight = 120
	// MaxPixels bounds width*height so that a wrong argument cannot ask for gigabytes.
	MaxPixels = 1 << 26
)

// ErrSize is wrapped by the error WritePNG returns for an image size it cannot draw.
var ErrSize = errors.New("plot: image size out of range")

// WritePNG draws the chart on a width x height image and writes it to w as PNG.
// The axes span the data and the bands; the Y axis always includes 0. Text scales
// with the image (the 5x7 font at 1x below 900 pixels wide, 2x from there).
func (c Chart) WritePNG(w io.Writer, width, height int) error {
	if width < MinWidth || height < MinHeight || width*height > MaxPixels {
		return fmt.Errorf("%w: %dx%d; use at least %dx%d and at most %d pixels", ErrSize, width, height, MinWidth, MinHeight, MaxPixels)
	}
	img := c.render(width, height)
	return encode(w, img)
}
