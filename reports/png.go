package reports

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"git.sr.ht/~sbinet/gg"
	"github.com/klauspost/compress/flate"
	xdraw "golang.org/x/image/draw"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
)

// encodePNG writes an opaque RGBA image as an 8-bit RGB PNG whose rows
// are all unfiltered (filter type None), deflated at zlib's fastest
// level (klauspost/compress's, 0.62 × the time of compress/zlib's on
// the plots' rows, 2 % larger) into one IDAT chunk. image/png tries the five filters on every
// row and keeps the best, which cost as much as the deflating: on the
// plots (flat colour, thin lines) the unfiltered rows compress about as
// well (files within ±10 % of image/png's at BestSpeed) in a third of
// the time. An image with any pixel not opaque goes to image/png, which
// keeps its alpha.
func encodePNG(w io.Writer, m *image.RGBA) error {
	e := pngEncoders.Get().(*pngEnc)
	defer pngEncoders.Put(e)
	ok, err := e.encode(w, m)
	if err != nil || ok {
		return err
	}
	return pngEncoder.Encode(w, m)
}

// adlerMod and adlerMax are Adler-32's modulus and the most bytes that
// can be summed before s2 might overflow 32 bits (hash/adler32's nmax,
// a multiple of 8).
const adlerMod, adlerMax = 65521, 5552

// adler32Update returns the Adler-32 checksum sum (RFC 1950) continued
// over p, as hash/adler32 computes it, summing 8 bytes at a time: for
// bytes b0..b7, s1 grows by their sum and s2 by 8·s1 + Σ (8-i)·bi. The
// sums come from 16-bit lanes of one 64-bit word multiplied by the
// weights (each lane's product under 2¹⁶, so no lane carries into the
// top one, which holds the dot product).
func adler32Update(sum uint32, p []byte) uint32 {
	s1, s2 := sum&0xffff, sum>>16
	for len(p) > 0 {
		q := p[:min(len(p), adlerMax)]
		p = p[len(q):]
		for len(q) >= 8 {
			v := binary.LittleEndian.Uint64(q)
			even, odd := v&0x00ff00ff00ff00ff, v>>8&0x00ff00ff00ff00ff
			all := uint32((even + odd) * 0x0001000100010001 >> 48)
			w := uint32(even*(8<<48|6<<32|4<<16|2)>>48) + uint32(odd*(7<<48|5<<32|3<<16|1)>>48)
			s2 += 8*s1 + w
			s1 += all
			q = q[8:]
		}
		for _, b := range q {
			s1 += uint32(b)
			s2 += s1
		}
		s1 %= adlerMod
		s2 %= adlerMod
	}
	return s2<<16 | s1
}

// unalignedLE is whether 8-byte loads and stores at any address are
// allowed and little-endian (amd64, arm64), for encode's row loop.
const unalignedLE = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"

// pngEnc is encodePNG's buffers, kept between figures.
type pngEnc struct {
	z   bytes.Buffer  // the IDAT chunk: length, type, zlib stream
	zw  *flate.Writer // the zlib stream's deflate data
	row []byte
}

var pngEncoders = sync.Pool{New: func() any { return new(pngEnc) }}

const pngSignature = "\x89PNG\r\n\x1a\n"

// encode writes m, or returns false without writing when a pixel of m
// is not opaque.
func (e *pngEnc) encode(w io.Writer, m *image.RGBA) (bool, error) {
	b := m.Bounds()
	wd, ht := b.Dx(), b.Dy()
	e.z.Reset()
	e.z.Write(make([]byte, 4)) // the chunk length, set below
	e.z.WriteString("IDAT")
	// The zlib stream (RFC 1950) as klauspost/compress's zlib writes it
	// at BestSpeed: the header 78 01, deflate, and the rows' Adler-32
	// (adler32Update: hash/adler32 a byte at a time was 35 M
	// instructions for the HPC2N run's figures).
	e.z.WriteString("\x78\x01")
	if e.zw == nil {
		var err error
		if e.zw, err = flate.NewWriter(&e.z, flate.BestSpeed); err != nil {
			return false, err
		}
	} else {
		e.zw.Reset(&e.z)
	}
	sum := uint32(1)
	// The row, and 2 bytes the last pair of pixels' 8-byte store spills
	// into.
	if n := 1 + 3*wd + 2; cap(e.row) < n {
		e.row = make([]byte, n)
	}
	buf := e.row[:1+3*wd+2]
	row := buf[:1+3*wd]
	row[0] = 0 // filter type None
	for y := b.Min.Y; y < b.Max.Y; y++ {
		pix := m.Pix[m.PixOffset(b.Min.X, y):][:4*wd]
		// Two pixels at a time: RGBA RGBA in, RGB RGB out (and 2 bytes
		// the next store overwrites); alpha is the AND of the pixels.
		alpha := uint64(math.MaxUint64)
		x, o := 0, 1
		if unalignedLE {
			// The same loads and stores without the bounds checks:
			// pix has 8 bytes from x on and buf 8 from o on.
			src, dst := unsafe.Pointer(unsafe.SliceData(pix)), unsafe.Pointer(&buf[1])
			pairs := wd / 2
			for i := range pairs {
				v := *(*uint64)(unsafe.Add(src, 8*i))
				alpha &= v
				*(*uint64)(unsafe.Add(dst, 6*i)) = v&0xffffff | v>>8&0xffffff000000
			}
			x, o = 8*pairs, 1+6*pairs
		}
		for ; x+8 <= len(pix); x, o = x+8, o+6 {
			v := binary.LittleEndian.Uint64(pix[x:])
			alpha &= v
			binary.LittleEndian.PutUint64(buf[o:], v&0xffffff|v>>8&0xffffff000000)
		}
		if x < len(pix) { // an odd width's last pixel
			p := pix[x : x+4 : x+4]
			row[o], row[o+1], row[o+2] = p[0], p[1], p[2]
			alpha &= uint64(p[3])<<24 | uint64(p[3])<<56 | 0x00ffffff00ffffff
		}
		if alpha|0x00ffffff00ffffff != math.MaxUint64 {
			return false, nil
		}
		sum = adler32Update(sum, row)
		if _, err := e.zw.Write(row); err != nil {
			return false, err
		}
	}
	if err := e.zw.Close(); err != nil {
		return false, err
	}
	idat := binary.BigEndian.AppendUint32(e.z.Bytes(), sum)
	binary.BigEndian.PutUint32(idat, uint32(len(idat)-8))
	idat = binary.BigEndian.AppendUint32(idat, crc32.ChecksumIEEE(idat[4:]))

	var hdr [8 + 25]byte
	h := append(hdr[:0], pngSignature...)
	h = binary.BigEndian.AppendUint32(h, 13)
	h = append(h, "IHDR"...)
	h = binary.BigEndian.AppendUint32(h, uint32(wd))
	h = binary.BigEndian.AppendUint32(h, uint32(ht))
	h = append(h, 8, 2, 0, 0, 0) // 8 bits, truecolour, deflate, adaptive filtering, no interlace
	h = binary.BigEndian.AppendUint32(h, crc32.ChecksumIEEE(h[12:]))
	if _, err := w.Write(h); err != nil {
		return false, err
	}
	if _, err := w.Write(idat); err != nil {
		return false, err
	}
	_, err := w.Write([]byte{0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82})
	return true, err
}

// newPNGCanvas returns a white vgimg canvas of figWidth × figHeight at
// figDPI, as vgimg.NewWith(UseWH, UseDPI, UseBackgroundColor(white)) makes it, but
// drawing on an image of pngImages (put it back once encoded) or a new
// one: gg.NewContextForImage, which NewWith calls, copies the new image
// into a second one (1.8 MB allocated and copied per figure), and a new
// image's pages are each faulted in (about 2 µs a page on the
// benchmarks' VM: 2.5 ms a figure). NewWith paints the image white
// whatever it held.
func newPNGCanvas() *vgimg.Canvas {
	w, h := int(math.Round(float64(figWidth/vg.Inch*figDPI))), int(math.Round(float64(figHeight/vg.Inch*figDPI)))
	img, _ := pngImages.Get().(*image.RGBA)
	if img == nil || img.Rect != image.Rect(0, 0, w, h) {
		img = image.NewRGBA(image.Rect(0, 0, w, h))
	}
	ctx := gg.NewContextForRGBA(img)
	ctx.SetLineCapButt()
	ctx.SetInterpolator(pngTextInterpolator)
	ctx.InvertY()
	// The size is the image's at figDPI; the background is white.
	return vgimg.NewWith(vgimg.UseImageWithContext(img, ctx), vgimg.UseDPI(figDPI))
}

// pngTextInterpolator is how gg places the text's glyph masks: every
// glyph is drawn through the interpolator's Transform, and gg's default,
// bilinear, takes x/image/draw's generic per-pixel path (an interface
// call per pixel: 75 M instructions for the HPC2N run's five figures).
// The figures place their text at whole pixels, upright or turned a
// quarter, where nearest-neighbour sampling picks the pixels bilinear
// does and Transform becomes a plain DrawMask
// (TestFigurePNGTextInterpolator: the same pixels).
var pngTextInterpolator xdraw.Interpolator = xdraw.NearestNeighbor

// pngImages are the images of PNG canvases whose figures were encoded.
var pngImages sync.Pool

// blankCanvas is a PNG's canvas, white when made, that leaves out the
// white fills made before anything else is drawn: each plot's Draw first
// fills its whole area with its background (white), which the rasterizer
// paints pixel by pixel, blending white over white into the same white
// (freetype's Over: (255·(m-α) + 65535·α/257·257)/m = 255 for every
// coverage α). Push, Pop and any stroke, text or image end the blank
// state; later fills are drawn as they come.
type blankCanvas struct {
	*vgimg.Canvas
	drawn bool
	white bool // the current colour is opaque white
}

func (c *blankCanvas) SetColor(clr color.Color) {
	c.white = false
	if clr != nil { // nil draws black
		r, g, b, a := clr.RGBA()
		c.white = r == 0xffff && g == 0xffff && b == 0xffff && a == 0xffff
	}
	c.Canvas.SetColor(clr)
}

func (c *blankCanvas) Fill(p vg.Path) {
	if c.drawn || !c.white {
		c.drawn = true
		c.Canvas.Fill(p)
	}
}

func (c *blankCanvas) Push() { c.drawn = true; c.Canvas.Push() }
func (c *blankCanvas) Pop()  { c.drawn = true; c.Canvas.Pop() }

func (c *blankCanvas) Stroke(p vg.Path) { c.drawn = true; c.Canvas.Stroke(p) }

func (c *blankCanvas) FillString(f font.Face, pt vg.Point, text string) {
	c.drawn = true
	c.Canvas.FillString(f, pt, text)
}

func (c *blankCanvas) DrawImage(r vg.Rectangle, img image.Image) {
	c.drawn = true
	c.Canvas.DrawImage(r, img)
}

// pngEncoder is image/png at zlib's fastest level, for images with
// transparency.
var pngEncoder = png.Encoder{CompressionLevel: png.BestSpeed}
