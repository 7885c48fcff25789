package reports

import (
	"bytes"
	"hash/adler32"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"
)

// TestEncodePNGPixels decodes encodePNG's files with image/png and
// compares every pixel: a figure's (opaque: the RGB path), an odd-sized
// opaque image, and one with transparency (image/png's path).
func TestEncodePNGPixels(t *testing.T) {
	var figPNG bytes.Buffer
	figs := Figures(nil, &Timeline{}, "test")
	if len(figs) == 0 {
		t.Fatal("no figures")
	}
	if err := figs[0].WritePNG(&figPNG); err != nil {
		t.Fatal(err)
	}
	fig, err := png.Decode(&figPNG)
	if err != nil {
		t.Fatal(err)
	}
	fm := image.NewRGBA(fig.Bounds())
	for y := range fig.Bounds().Dy() {
		for x := range fig.Bounds().Dx() {
			fm.Set(x, y, fig.At(x, y))
		}
	}
	odd := image.NewRGBA(image.Rect(3, 5, 40, 22))
	clear := image.NewRGBA(image.Rect(0, 0, 17, 9))
	for y := range 30 {
		for x := range 50 {
			c := color.RGBA{uint8(x * 5), uint8(y * 9), uint8(x*y + 1), 0xff}
			odd.Set(x, y, c)
			if (x+y)%3 == 0 {
				c = color.RGBA{uint8(x), 0, 0, uint8(y * 20)}
			}
			clear.Set(x, y, c)
		}
	}
	// One pixel not opaque, where the two-pixel loop reads it: the last
	// of an odd row, and the second of a pair.
	lastClear := image.NewRGBA(image.Rect(0, 0, 7, 3))
	pairClear := image.NewRGBA(image.Rect(0, 0, 8, 3))
	for _, m := range []*image.RGBA{lastClear, pairClear} {
		for i := range m.Pix {
			m.Pix[i] = uint8(i*7 + 1)
			if i%4 == 3 {
				m.Pix[i] = 0xff
			}
		}
	}
	lastClear.SetRGBA(6, 1, color.RGBA{1, 2, 3, 0xfe})
	pairClear.SetRGBA(3, 2, color.RGBA{1, 2, 3, 0x7f})
	for _, tc := range []struct {
		name string
		m    *image.RGBA
		rgb  bool
	}{{"figure", fm, true}, {"odd", odd, true}, {"alpha", clear, false},
		{"last clear", lastClear, false}, {"pair clear", pairClear, false}} {
		var b bytes.Buffer
		if err := encodePNG(&b, tc.m); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := png.Decode(&b)
		if err != nil {
			t.Fatalf("%s: decode: %v", tc.name, err)
		}
		if _, isRGBA := got.(*image.RGBA); isRGBA != tc.rgb {
			t.Errorf("%s: decoded as %T", tc.name, got)
		}
		r := tc.m.Bounds()
		if got.Bounds().Dx() != r.Dx() || got.Bounds().Dy() != r.Dy() {
			t.Fatalf("%s: bounds %v, want the size of %v", tc.name, got.Bounds(), r)
		}
		gr := got.Bounds()
		for y := range r.Dy() {
			for x := range r.Dx() {
				want := color.NRGBAModel.Convert(tc.m.At(r.Min.X+x, r.Min.Y+y))
				if g := color.NRGBAModel.Convert(got.At(gr.Min.X+x, gr.Min.Y+y)); g != want {
					t.Fatalf("%s: pixel (%d, %d) = %v, want %v", tc.name, x, y, g, want)
				}
			}
		}
	}
}

// TestAdler32Update compares adler32Update with hash/adler32 on random
// bytes and on runs of 0xff (the largest sums) of many lengths, whole
// and in pieces.
func TestAdler32Update(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	random := make([]byte, 40_000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	ones := bytes.Repeat([]byte{0xff}, 40_000)
	for _, data := range [][]byte{random, ones} {
		for _, n := range []int{0, 1, 7, 8, 9, 63, 5551, 5552, 5553, 11104, 11111, 40_000} {
			p := data[:n]
			if got, want := adler32Update(1, p), adler32.Checksum(p); got != want {
				t.Errorf("%d bytes: %08x, want %08x", n, got, want)
			}
			cut := n / 3
			if got, want := adler32Update(adler32Update(1, p[:cut]), p[cut:]), adler32.Checksum(p); got != want {
				t.Errorf("%d bytes in two: %08x, want %08x", n, got, want)
			}
		}
	}
}
