package plot

import (
	"image"
	"image/png"
	"io"
)

func (c Chart) render(width, height int) *image.RGBA {
	return image.NewRGBA(image.Rect(0, 0, width, height)) // TODO
}

func encode(w io.Writer, img image.Image) error {
	return png.Encode(w, img)
}
