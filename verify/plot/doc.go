// Package plot draws small line charts as PNG images with the standard library only
// (image, image/png, image/draw) and a built-in 5x7 pixel font: axes with ticks and
// labels, several coloured series, shaded bands with labels (such as the windows in
// which a fault was active) and a legend.
//
// It exists so that reports in docs/ can carry a chart that the test harness and the
// simulation make themselves, with no plotting service and no new dependency. It is
// deliberately small: one chart type, linear axes, no anti-aliasing.
//
//	c := plot.Chart{
//		Title: "IDs/s", XLabel: "seconds", YLabel: "IDs/s",
//		Series: []plot.Series{{Name: "orders", Points: pts}},
//		Shade:  []plot.Band{{From: 10, To: 25, Label: "partition n1"}},
//	}
//	err := c.WritePNG(f, 1000, 500)
package plot
