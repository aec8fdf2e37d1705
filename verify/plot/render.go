package plot

import (
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

var (
	white = color.RGBA{255, 255, 255, 255}
	black = color.RGBA{0, 0, 0, 255}
	grid  = color.RGBA{225, 225, 225, 255}
	ink   = color.RGBA{60, 60, 60, 255}
)

// seriesColors is the Tableau 10 palette: distinct on screen and in print.
var seriesColors = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
	{188, 189, 34, 255}, {23, 190, 207, 255},
}

// bandColors are the tints of shaded bands (drawn at bandAlpha over the
// background) and, darker, of their labels.
var bandColors = []color.RGBA{
	{230, 85, 13, 255}, {117, 107, 177, 255}, {49, 163, 84, 255}, {214, 39, 40, 255}, {107, 174, 214, 255},
}

const bandAlpha = 0.18

// SeriesColor returns the colour series i is drawn in.
func SeriesColor(i int) color.RGBA { return seriesColors[i%len(seriesColors)] }

// BandColor returns the full-strength colour of band i; the band itself is a light
// tint of it (over white: each channel c becomes 255 - 0.18*(255-c)).
func BandColor(i int) color.RGBA { return bandColors[i%len(bandColors)] }

// canvas draws on an image with the font scaled by s.
type canvas struct {
	img *image.RGBA
	s   int
}

func (c canvas) set(x, y int, col color.RGBA) {
	if image.Pt(x, y).In(c.img.Rect) {
		c.img.SetRGBA(x, y, col)
	}
}

func (c canvas) fill(r image.Rectangle, col color.RGBA) {
	draw.Draw(c.img, r, image.NewUniform(col), image.Point{}, draw.Src)
}

// tint blends col at alpha a over the pixels of r.
func (c canvas) tint(r image.Rectangle, col color.RGBA, a float64) {
	r = r.Intersect(c.img.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			p := c.img.RGBAAt(x, y)
			mix := func(bg, fg uint8) uint8 { return uint8(math.Round(float64(bg)*(1-a) + float64(fg)*a)) }
			c.img.SetRGBA(x, y, color.RGBA{mix(p.R, col.R), mix(p.G, col.G), mix(p.B, col.B), 255})
		}
	}
}

// textWidth and textHeight are the size of a string in pixels.
func (c canvas) textWidth(s string) int {
	n := utf8.RuneCountInString(s)
	if n == 0 {
		return 0
	}
	return (6*n - 1) * c.s
}

func (c canvas) textHeight() int { return 7 * c.s }

// text writes s with its top-left corner at (x, y).
func (c canvas) text(x, y int, s string, col color.RGBA) {
	for _, r := range s {
		g := glyph(r)
		for cx, bits := range g {
			for cy := 0; cy < 7; cy++ {
				if bits>>cy&1 == 0 {
					continue
				}
				for dy := 0; dy < c.s; dy++ {
					for dx := 0; dx < c.s; dx++ {
						c.set(x+cx*c.s+dx, y+cy*c.s+dy, col)
					}
				}
			}
		}
		x += 6 * c.s
	}
}

// textUp writes s turned a quarter left, read from bottom to top, with the bottom
// left corner of its first character at (x, y).
func (c canvas) textUp(x, y int, s string, col color.RGBA) {
	for _, r := range s {
		g := glyph(r)
		for cx, bits := range g {
			for cy := 0; cy < 7; cy++ {
				if bits>>cy&1 == 0 {
					continue
				}
				for dy := 0; dy < c.s; dy++ {
					for dx := 0; dx < c.s; dx++ {
						c.set(x+cy*c.s+dx, y-cx*c.s-dy, col)
					}
				}
			}
		}
		y -= 6 * c.s
	}
}

// line draws from (x0, y0) to (x1, y1) with a square pen of w pixels, clipped to clip.
func (c canvas) line(x0, y0, x1, y1, w int, col color.RGBA, clip image.Rectangle) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		for py := 0; py < w; py++ {
			for px := 0; px < w; px++ {
				if p := image.Pt(x0+px-w/2, y0+py-w/2); p.In(clip) {
					c.img.SetRGBA(p.X, p.Y, col)
				}
			}
		}
		if x0 == x1 && y0 == y1 {
			return
		}
		if e2 := 2 * e; e2 >= dy {
			e += dy
			x0 += sx
		} else {
			e += dx
			y0 += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// axis maps data values to pixels along one direction.
type axis struct {
	min, max float64 // data range shown
	p0, p1   int     // pixels of min and max
	step     float64 // tick spacing
}

func (a axis) px(v float64) int {
	return a.p0 + int(math.Round((v-a.min)/(a.max-a.min)*float64(a.p1-a.p0)))
}

func (a axis) ticks() []float64 {
	var out []float64
	for v := math.Ceil(a.min/a.step-1e-9) * a.step; v <= a.max+a.step*1e-9; v += a.step {
		if math.Abs(v) < a.step*1e-9 {
			v = 0
		}
		out = append(out, v)
	}
	return out
}

// niceStep returns a step of 1, 2 or 5 times a power of ten that cuts span into
// about n parts.
func niceStep(span float64, n int) float64 {
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / p; {
	case f < 1.5:
		return p
	case f < 3.5:
		return 2 * p
	case f < 7.5:
		return 5 * p
	}
	return 10 * p
}

// label formats tick values: a k, M or G suffix for large axes, and as many
// decimals as the step needs.
func (a axis) label(v float64) string {
	big := math.Max(math.Abs(a.min), math.Abs(a.max))
	div, suffix := 1.0, ""
	switch {
	case big >= 1e9:
		div, suffix = 1e9, "G"
	case big >= 1e6:
		div, suffix = 1e6, "M"
	case big >= 1e4:
		div, suffix = 1e3, "k"
	}
	dec := 0
	if st := a.step / div; st < 1 {
		dec = int(math.Ceil(-math.Log10(st) - 1e-9))
	}
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v/div, 'f', dec, 64) + suffix
}

// bounds returns the X and Y data ranges: X spans the points and bands; Y spans
// the points and 0.
func (c Chart) bounds() (x0, x1, y0, y1 float64) {
	x0, x1 = math.Inf(1), math.Inf(-1)
	y0, y1 = 0, 0
	for _, s := range c.Series {
		for _, p := range s.Points {
			if !finite(p.X) || !finite(p.Y) {
				continue
			}
			x0, x1 = math.Min(x0, p.X), math.Max(x1, p.X)
			y0, y1 = math.Min(y0, p.Y), math.Max(y1, p.Y)
		}
	}
	for _, b := range c.Shade {
		for _, v := range []float64{b.From, b.To} {
			if finite(v) {
				x0, x1 = math.Min(x0, v), math.Max(x1, v)
			}
		}
	}
	if x0 > x1 {
		x0, x1 = 0, 1
	}
	if x0 == x1 {
		x0, x1 = x0-0.5, x1+0.5
	}
	if y0 == y1 {
		y1 = y0 + 1
	}
	return x0, x1, y0, y1
}

// legendEntries returns the series that have a name, with their palette index.
func (c Chart) legendEntries() []int {
	var out []int
	for i, s := range c.Series {
		if s.Name != "" {
			out = append(out, i)
		}
	}
	return out
}

// frame is where the parts of a chart go on an image of a given size.
type frame struct {
	s      int // font scale
	area   image.Rectangle
	xa, ya axis
	legend []legendItem
	rows   int // legend rows
	rowH   int

	labels    []bandLabel
	labelRows int
	labelTop  int // y of the first label row
	labelH    int
}

type legendItem struct{ x, row, i int }

func (c Chart) frame(width, height int) frame {
	f := frame{s: 1}
	if width >= 900 && height >= 450 {
		f.s = 2
	}
	s := f.s
	cv := canvas{s: s}
	th := cv.textHeight()
	pad := 6 * s

	x0, x1, y0, y1 := c.bounds()
	ya := axis{step: niceStep(y1-y0, 6)}
	// A little headroom, so that a series at its maximum does not run along the
	// top edge, then out to whole ticks.
	head := 0.03 * (y1 - y0)
	ya.min = math.Floor((y0-head*boolf(y0 < 0))/ya.step) * ya.step
	ya.max = math.Ceil((y1+head*boolf(y1 > 0))/ya.step) * ya.step

	// Legend: one swatch and name per series, flowing left to right, wrapped.
	entries := c.legendEntries()
	if len(entries) > 0 {
		f.rows = 1
		x := pad
		for _, i := range entries {
			w := legendSwatch*s + 4*s + cv.textWidth(c.Series[i].Name) + 12*s
			if x+w > width-pad && x > pad {
				f.rows++
				x = pad
			}
			f.legend = append(f.legend, legendItem{x, f.rows - 1, i})
			x += w
		}
	}
	f.rowH = th + 5*s

	// Plot area: room for the title and the band labels above; Y tick labels and
	// the Y label left; X tick labels, the X label and the legend below. The
	// width comes first: where the band labels go depends on it.
	maxTick := 0
	for _, v := range ya.ticks() {
		maxTick = max(maxTick, cv.textWidth(ya.label(v)))
	}
	left := pad + maxTick + 6*s
	if c.YLabel != "" {
		left += th + pad
	}
	right := width - pad - 3*cv.textWidth("0000")/2
	f.xa = axis{min: x0, max: x1, p0: left, p1: right - 1}
	f.xa.step = niceStep(x1-x0, max(2, (right-left)/(70*s)))
	// Out to the next tick when it is close: a series from 0.25 to 9.75 gets an
	// axis from 0 to 10.
	if lo := math.Floor(x0/f.xa.step) * f.xa.step; x0-lo <= f.xa.step/2 {
		f.xa.min = lo
	}
	if hi := math.Ceil(x1/f.xa.step) * f.xa.step; hi-x1 <= f.xa.step/2 {
		f.xa.max = hi
	}
	f.labelH = th + 3*s
	f.labels, f.labelRows = c.placeLabels(cv, f.xa, left, right)

	top := pad
	if c.Title != "" {
		top += th + pad
	}
	f.labelTop = top
	top += f.labelRows * f.labelH
	top += th/2 + 2*s // half a tick label sticks out above the top tick
	bottom := height - pad - f.rows*f.rowH
	if c.XLabel != "" {
		bottom -= th + pad
	}
	bottom -= th + 6*s + 4*s // X tick labels and tick marks
	f.area = image.Rect(left, top, right, bottom)
	if f.area.Dx() < 20 || f.area.Dy() < 20 {
		// Tiny image: the plot only, no band labels.
		f.area = image.Rect(0, 0, width, height).Inset(min(width, height) / 8)
		f.xa = axis{min: x0, max: x1, p0: f.area.Min.X, p1: f.area.Max.X - 1, step: niceStep(x1-x0, 2)}
		f.labels, f.labelRows = nil, 0
	}
	ya.p0, ya.p1 = f.area.Max.Y-1, f.area.Min.Y
	f.ya = ya
	return f
}

// bandLabel is where one band's label goes: a row above the plot area.
type bandLabel struct {
	band     int
	x, w     int
	row      int
	from, to int // the band's pixels
}

// placeLabels puts each band's label above the plot area, starting at its band,
// on the first row where it overlaps no earlier label.
func (c Chart) placeLabels(cv canvas, xa axis, left, right int) ([]bandLabel, int) {
	s := cv.s
	var out []bandLabel
	rows := 0
	for i, b := range c.Shade {
		if b.Label == "" || !finite(b.From) || !finite(b.To) {
			continue
		}
		from, to := xa.px(math.Min(b.From, b.To)), xa.px(math.Max(b.From, b.To))
		w := cv.textWidth(b.Label)
		x := min(max(from+s, left), right-w)
		row := 0
		for again := true; again; {
			again = false
			for _, l := range out {
				if l.row == row && x < l.x+l.w+6*s && l.x < x+w+6*s {
					again = true
					row++
					break
				}
			}
		}
		out = append(out, bandLabel{band: i, x: x, w: w, row: row, from: from, to: max(to, from+1)})
		rows = max(rows, row+1)
	}
	return out, rows
}

// legendSwatch is the length of a legend's colour swatch at font scale 1.
const legendSwatch = 14

func (c Chart) render(width, height int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	f := c.frame(width, height)
	s, area, xa, ya := f.s, f.area, f.xa, f.ya
	cv := canvas{img: img, s: s}
	cv.fill(img.Rect, white)
	th := cv.textHeight()
	pad := 6 * s

	// Bands under everything else; each label sits above the plot area on a
	// strip of its band's tint that runs down into the band.
	for i, b := range c.Shade {
		if !finite(b.From) || !finite(b.To) {
			continue
		}
		px0, px1 := xa.px(math.Min(b.From, b.To)), xa.px(math.Max(b.From, b.To))
		cv.tint(image.Rect(px0, area.Min.Y, max(px1, px0+1), area.Max.Y).Intersect(area), BandColor(i), bandAlpha)
	}
	for _, l := range f.labels {
		y := f.labelTop + l.row*f.labelH
		stripe := image.Rect(max(l.from, area.Min.X), y+f.labelH-s, min(l.to, area.Max.X), area.Min.Y)
		cv.tint(stripe, BandColor(l.band), bandAlpha)
	}
	for _, l := range f.labels {
		y := f.labelTop + l.row*f.labelH
		box := image.Rect(l.x-s, y-s, l.x+l.w+s, y+f.labelH-s)
		cv.fill(box, white) // over other bands' stripes
		cv.tint(box, BandColor(l.band), bandAlpha)
		d := BandColor(l.band)
		cv.text(l.x, y+s, c.Shade[l.band].Label, color.RGBA{d.R * 3 / 5, d.G * 3 / 5, d.B * 3 / 5, 255})
	}

	// Grid, axes, ticks and their labels.
	for _, v := range ya.ticks() {
		py := ya.px(v)
		for x := area.Min.X; x < area.Max.X; x += 2 {
			if img.RGBAAt(x, py) == white {
				img.SetRGBA(x, py, grid)
			}
		}
		cv.fill(image.Rect(area.Min.X-4*s, py, area.Min.X, py+s), black)
		l := ya.label(v)
		cv.text(area.Min.X-6*s-cv.textWidth(l), py-th/2, l, ink)
	}
	for _, v := range xa.ticks() {
		px := xa.px(v)
		for y := area.Min.Y; y < area.Max.Y; y += 2 {
			if img.RGBAAt(px, y) == white {
				img.SetRGBA(px, y, grid)
			}
		}
		cv.fill(image.Rect(px, area.Max.Y, px+s, area.Max.Y+4*s), black)
		l := xa.label(v)
		cv.text(px-cv.textWidth(l)/2, area.Max.Y+6*s, l, ink)
	}
	cv.fill(image.Rect(area.Min.X-s, area.Min.Y, area.Min.X, area.Max.Y+s), black) // Y axis
	cv.fill(image.Rect(area.Min.X-s, area.Max.Y, area.Max.X, area.Max.Y+s), black) // X axis

	// Series, clipped to the plot area.
	for i, sr := range c.Series {
		col := SeriesColor(i)
		prevOK := false
		var px, py int
		for _, p := range sr.Points {
			if !finite(p.X) || !finite(p.Y) {
				prevOK = false
				continue
			}
			nx, ny := xa.px(p.X), ya.px(p.Y)
			if prevOK {
				cv.line(px, py, nx, ny, s, col, area)
			} else {
				cv.line(nx, ny, nx, ny, s, col, area)
			}
			px, py, prevOK = nx, ny, true
		}
	}

	// Title, axis labels, legend.
	if c.Title != "" {
		w := cv.textWidth(c.Title)
		x := max(pad, (width-w)/2)
		cv.text(x, pad, c.Title, black)
		cv.text(x+1, pad, c.Title, black) // bold
	}
	if c.XLabel != "" {
		w := cv.textWidth(c.XLabel)
		cv.text(max(pad, area.Min.X+(area.Dx()-w)/2), area.Max.Y+6*s+th+pad, c.XLabel, black)
	}
	if c.YLabel != "" {
		h := cv.textWidth(c.YLabel)
		cv.textUp(pad, min(height-pad, area.Min.Y+(area.Dy()+h)/2), c.YLabel, black)
	}
	legendTop := height - pad - f.rows*f.rowH + 3*s
	for _, e := range f.legend {
		y := legendTop + e.row*f.rowH
		col := SeriesColor(e.i)
		cv.fill(image.Rect(e.x, y+th/2-s, e.x+legendSwatch*s, y+th/2+2*s), col)
		cv.text(e.x+legendSwatch*s+4*s, y, c.Series[e.i].Name, black)
	}
	return img
}

func encode(w io.Writer, img image.Image) error {
	enc := png.Encoder{CompressionLevel: png.DefaultCompression}
	return enc.Encode(w, img)
}
