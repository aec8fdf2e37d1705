package plot

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"testing"
)

// sample is a chart like the fault harness's: IDs/s of three namespaces over five
// minutes with an outage in one, and four fault windows, two of them overlapping.
func sample() Chart {
	var a, b, c []Point
	for i := 0; i <= 300; i++ {
		x := float64(i)
		ya := 180_000 + 20_000*math.Sin(x/9)
		yb := 120_000 + 10_000*math.Cos(x/13)
		yc := 60_000.0
		if x >= 120 && x < 150 {
			ya = 0 // fenced: lease lost
		}
		if x >= 200 && x < 230 {
			yc = 15_000
		}
		a = append(a, Point{x, ya})
		b = append(b, Point{x, yb})
		c = append(c, Point{x, yc})
	}
	return Chart{
		Title:  "IDs/s received by the clients",
		XLabel: "seconds since start",
		YLabel: "IDs/s",
		Series: []Series{{Name: "orders (snowflake)", Points: a}, {Name: "invoices (segment)", Points: b}, {Name: "events (redis)", Points: c}},
		Shade: []Band{
			{From: 30, To: 60, Label: "netem delay 2s"},
			{From: 120, To: 150, Label: "SIGSTOP n1 > TTL"},
			{From: 140, To: 170, Label: "partition n2|stores"},
			{From: 200, To: 230, Label: "sentinel failover"},
		},
	}
}

// manyBands is a harness-sized run: twenty faults one after another, their names
// longer than their windows are wide.
func manyBands() Chart {
	c := sample()
	c.Shade = nil
	names := []string{"postgres drop (all nodes)", "n1 cut off the stores", "n2 cut off the clients", "n3 loses 30% of packets",
		"etcd leader killed", "redis SENTINEL FAILOVER", "n1 SIGKILL", "n2 SIGSTOP", "n3 restarted 30s ahead", "n1 restarted 30s behind"}
	for i := range 20 {
		from := 5 + float64(i)*14.5
		c.Shade = append(c.Shade, Band{From: from, To: from + 9, Label: names[i%len(names)]})
	}
	return c
}

func decode(t *testing.T, c Chart, w, h int) image.Image {
	t.Helper()
	var buf bytes.Buffer
	if err := c.WritePNG(&buf, w, h); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func rgba(img image.Image, x, y int) color.RGBA {
	r, g, b, a := img.At(x, y).RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
}

// tinted is the colour of band i over the white background.
func tinted(i int) color.RGBA {
	c := BandColor(i)
	mix := func(fg uint8) uint8 { return uint8(math.Round(255*(1-bandAlpha) + float64(fg)*bandAlpha)) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 255}
}

// TestSample writes the sample chart to $PLOT_SAMPLE when set, to look at it;
// testdata/sample.png was made with PLOT_SAMPLE=testdata/sample.png (not a golden
// file: nothing compares with it).
func TestSample(t *testing.T) {
	path := os.Getenv("PLOT_SAMPLE")
	if path == "" {
		t.Skip("writes the sample chart only when PLOT_SAMPLE names a PNG file to write")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := sample().WritePNG(f, 1200, 600); err != nil {
		t.Fatal(err)
	}
	g, err := os.Create(path + ".many.png")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := manyBands().WritePNG(g, 1800, 700); err != nil {
		t.Fatal(err)
	}
}

func TestLabelsDoNotOverlap(t *testing.T) {
	for _, sz := range [][2]int{{1800, 700}, {800, 400}, {400, 300}} {
		c := manyBands()
		f := c.frame(sz[0], sz[1])
		if len(f.labels) != len(c.Shade) {
			t.Fatalf("%v: %d labels placed, want %d", sz, len(f.labels), len(c.Shade))
		}
		for i, a := range f.labels {
			if a.x < 0 || a.x+a.w > sz[0] {
				t.Errorf("%v: label %d at %d..%d leaves the image", sz, i, a.x, a.x+a.w)
			}
			for _, b := range f.labels[:i] {
				if a.row == b.row && a.x < b.x+b.w && b.x < a.x+a.w {
					t.Errorf("%v: labels %q and %q overlap on row %d", sz, c.Shade[a.band].Label, c.Shade[b.band].Label, a.row)
				}
			}
		}
		if f.area.Min.Y < f.labelTop+f.labelRows*f.labelH {
			t.Errorf("%v: plot area does not start below the label rows", sz)
		}
	}
}

func TestSizes(t *testing.T) {
	for _, sz := range [][2]int{{MinWidth, MinHeight}, {640, 360}, {1200, 600}, {2000, 300}, {300, 1000}} {
		for _, c := range []Chart{{}, sample(), {Series: []Series{{Name: "one", Points: []Point{{1, 1}}}}}} {
			img := decode(t, c, sz[0], sz[1])
			if b := img.Bounds(); b.Dx() != sz[0] || b.Dy() != sz[1] {
				t.Errorf("asked %v, got %v", sz, b)
			}
		}
	}
}

func TestBadSize(t *testing.T) {
	for _, sz := range [][2]int{{MinWidth - 1, 400}, {400, MinHeight - 1}, {0, 0}, {-5, 400}, {1 << 14, 1 << 14}} {
		var buf bytes.Buffer
		if err := sample().WritePNG(&buf, sz[0], sz[1]); !errors.Is(err, ErrSize) {
			t.Errorf("%v: err %v, want ErrSize", sz, err)
		}
		if buf.Len() != 0 {
			t.Errorf("%v: wrote %d bytes on error", sz, buf.Len())
		}
	}
}

func TestBandIsShadedWhereItIs(t *testing.T) {
	c := Chart{
		Series: []Series{{Points: []Point{{0, 0}, {100, 10}}}},
		Shade:  []Band{{From: 40, To: 60, Label: "fault"}},
	}
	for _, sz := range [][2]int{{400, 300}, {1200, 600}} {
		img := decode(t, c, sz[0], sz[1])
		f := c.frame(sz[0], sz[1])
		lo, hi := f.xa.px(40), f.xa.px(60)
		tint := tinted(0)
		// Every pixel of the band's rectangle, but for grid lines, the series and
		// the label, is tinted; none outside it.
		var in, out, inside int
		for y := 0; y < sz[1]; y++ {
			for x := 0; x < sz[0]; x++ {
				p := rgba(img, x, y)
				inBand := x >= lo && x < hi && image.Pt(x, y).In(f.area)
				if inBand {
					inside++
				}
				if p != tint {
					continue
				}
				// Above the plot area, the label's box and the strip that joins it
				// to the band are tinted too.
				l := f.labels[0]
				labelBox := x >= l.x-f.s && x < l.x+l.w+f.s && y >= f.labelTop-f.s && y < f.area.Min.Y
				stripe := x >= lo && x < hi && y >= f.labelTop && y < f.area.Min.Y
				switch {
				case inBand:
					in++
				case labelBox || stripe:
				default:
					out++
				}
			}
		}
		if out != 0 {
			t.Errorf("%v: %d tinted pixels outside the band", sz, out)
		}
		if in < inside*8/10 {
			t.Errorf("%v: %d of the band's %d pixels tinted, want most", sz, in, inside)
		}
		// Just outside the band, in the middle of the plot height, is background.
		y := (f.area.Min.Y + f.area.Max.Y) / 2
		for _, x := range []int{lo - 3, hi + 3} {
			if p := rgba(img, x, y); p == tint {
				t.Errorf("%v: pixel (%d,%d) outside the band is tinted", sz, x, y)
			}
		}
	}
}

func TestSeriesPixels(t *testing.T) {
	c := Chart{
		Title: "t", XLabel: "x", YLabel: "y",
		Series: []Series{
			{Name: "up", Points: []Point{{0, 0}, {10, 100}}},
			{Name: "flat", Points: []Point{{0, 50}, {5, math.NaN()}, {10, 50}}},
		},
	}
	img := decode(t, c, 640, 400)
	f := c.frame(640, 400)
	// Points of each series, on and between the given points, carry its colour.
	for _, p := range []Point{{0, 0}, {5, 50}, {10, 100}} {
		x, y := f.xa.px(p.X), f.ya.px(p.Y)
		if !near(img, x, y, SeriesColor(0)) {
			t.Errorf("series 0 not drawn at %v (%d,%d)", p, x, y)
		}
	}
	for _, p := range []Point{{0, 50}, {10, 50}} {
		if x, y := f.xa.px(p.X), f.ya.px(p.Y); !near(img, x, y, SeriesColor(1)) {
			t.Errorf("series 1 not drawn at %v", p)
		}
	}
	// The NaN breaks the flat line: nothing of its colour in the middle.
	if x, y := f.xa.px(2.5), f.ya.px(50); near(img, x, y, SeriesColor(1)) {
		t.Errorf("series 1 drawn across its NaN point")
	}
	// Legend swatches below the plot area, one per named series.
	for i := range c.Series {
		found := false
		for y := f.area.Max.Y + 1; y < 400 && !found; y++ {
			for x := 0; x < 640 && !found; x++ {
				found = rgba(img, x, y) == SeriesColor(i)
			}
		}
		if !found {
			t.Errorf("no legend swatch for series %d", i)
		}
	}
}

// near reports whether a pixel within 1 of (x, y) has colour c.
func near(img image.Image, x, y int, c color.RGBA) bool {
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			if rgba(img, x+dx, y+dy) == c {
				return true
			}
		}
	}
	return false
}

func TestAxes(t *testing.T) {
	for _, tc := range []struct {
		span float64
		n    int
		want float64
	}{{10, 5, 2}, {1, 5, 0.2}, {300, 6, 50}, {200_000, 4, 50_000}, {7, 7, 1}, {0.03, 3, 0.01}} {
		if got := niceStep(tc.span, tc.n); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("niceStep(%v, %d) = %v, want %v", tc.span, tc.n, got, tc.want)
		}
	}
	for _, tc := range []struct {
		a    axis
		v    float64
		want string
	}{
		{axis{min: 0, max: 200_000, step: 50_000}, 150_000, "150k"},
		{axis{min: 0, max: 3_000_000, step: 500_000}, 2_500_000, "2.5M"},
		{axis{min: 0, max: 1, step: 0.2}, 0.4, "0.4"},
		{axis{min: 0, max: 300, step: 50}, 250, "250"},
		{axis{min: -10, max: 10, step: 5}, -5, "-5"},
		{axis{min: 0, max: 10, step: 2}, 0, "0"},
	} {
		if got := tc.a.label(tc.v); got != tc.want {
			t.Errorf("label(%v) on %+v = %q, want %q", tc.v, tc.a, got, tc.want)
		}
	}
	ticks := axis{min: 0, max: 1, step: 0.2}.ticks()
	if len(ticks) != 6 || ticks[0] != 0 || math.Abs(ticks[5]-1) > 1e-9 {
		t.Errorf("ticks %v, want 0, 0.2, ..., 1", ticks)
	}
}

func TestFont(t *testing.T) {
	seen := map[[5]byte]rune{}
	for r := rune(33); r <= 126; r++ {
		g := glyph(r)
		if g == ([5]byte{}) {
			t.Errorf("%q is blank", r)
		}
		for _, col := range g {
			if col&0x80 != 0 {
				t.Errorf("%q uses an eighth row", r)
			}
		}
		if o, dup := seen[g]; dup {
			t.Errorf("%q and %q share a glyph", o, r)
		}
		seen[g] = r
	}
	if glyph('é') != glyph('?') || glyph('–') != glyph('-') {
		t.Error("fallbacks for non-ASCII runes")
	}
}

func TestTextPixels(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 40, 20))
	cv := canvas{img: img, s: 1}
	cv.text(1, 1, "I", black)
	// 'I' is 0x00,0x41,0x7F,0x41,0x00: a full column in the middle, serifs top and bottom.
	for y := 1; y < 8; y++ {
		if img.RGBAAt(3, y) != black {
			t.Errorf("column 3, row %d not set", y)
		}
	}
	if img.RGBAAt(2, 1) != black || img.RGBAAt(2, 4) == black {
		t.Error("serif of I wrong")
	}
	up := image.NewRGBA(image.Rect(0, 0, 20, 40))
	canvas{img: up, s: 1}.textUp(1, 30, "I", black)
	for x := 1; x < 8; x++ {
		if up.RGBAAt(x, 28) != black {
			t.Errorf("rotated I: row 28, column %d not set", x)
		}
	}
}
