package benchcmp

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"strings"
)

// contenderColors keep each contender's colour the same in every chart.
var contenderColors = map[string]color.RGBA{
	"pgreflect":    {47, 111, 223, 255},
	"ceiling":      {140, 140, 140, 255},
	"postgraphile": {224, 123, 57, 255},
}

// WriteChart draws requests per second per query, one bar per contender, as a PNG. The standard library has
// no text rendering, so labels use a small built-in bitmap font (upper case, digits, a few signs).
func (r *Results) WriteChart(path string) error {
	const (
		w, h                   = 1100, 560
		left, right, top, base = 90, 30, 80, 490
		scale                  = 2
	)
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{255, 255, 255, 255}}, image.Point{}, draw.Src)
	black := color.RGBA{30, 30, 30, 255}
	grid := color.RGBA{225, 225, 225, 255}

	maxRPS := 0.0
	for _, c := range r.Cells {
		maxRPS = math.Max(maxRPS, c.ReqPerSec)
	}
	step := niceStep(maxRPS / 5)
	yMax := step * math.Ceil(maxRPS/step)
	if yMax == 0 {
		yMax = 1
	}
	y := func(v float64) int { return base - int(v/yMax*float64(base-top)) }
	for v := 0.0; v <= yMax+step/2; v += step {
		fillRect(img, left, y(v), w-right, y(v)+1, grid)
		label := fmt.Sprintf("%.0f", v)
		drawText(img, left-10-textWidth(label, scale), y(v)-7, label, scale, black)
	}
	fillRect(img, left, top, left+1, base, black)
	fillRect(img, left, base, w-right, base+1, black)

	title := fmt.Sprintf("REQUESTS PER SECOND, HIGHER IS BETTER (%d CONNECTIONS, %d CPUS)", r.Setup.Connections, r.Machine.CPUs)
	drawText(img, left, 20, title, scale, black)
	lx := left
	for _, name := range r.Contenders {
		fillRect(img, lx, 52, lx+16, 66, contenderColors[name])
		drawText(img, lx+22, 52, name, scale, black)
		lx += 22 + textWidth(name, scale) + 30
	}

	groupW := (w - right - left) / max(1, len(r.Queries))
	barW := (groupW - 40) / max(1, len(r.Contenders))
	for qi, q := range r.Queries {
		gx := left + qi*groupW + 20
		for ci, name := range r.Contenders {
			cell := r.Cell(name, q.Name)
			if cell == nil {
				continue
			}
			x0 := gx + ci*barW
			fillRect(img, x0+2, y(cell.ReqPerSec), x0+barW-2, base, contenderColors[name])
			label := fmt.Sprintf("%.0f", cell.ReqPerSec)
			lw := textWidth(label, 1)
			drawText(img, x0+(barW-lw)/2, y(cell.ReqPerSec)-10, label, 1, black)
		}
		drawText(img, gx+(groupW-40-textWidth(q.Name, scale))/2, base+12, q.Name, scale, black)
	}
	drawText(img, left, base+40, "Q1 FIRST ACCOUNT  Q2 NEWEST POSTS+BLOG  Q3 ACCOUNTS+BLOGS  Q4 INSERT (USER)  Q5 BLOGS+POSTS (USER, RLS)", 1, black)
	drawText(img, left, base+54, "EXTENSIONS: Q6 UPSERT (USER)  Q7 POST+2 COMMENTS NESTED INSERT (USER)  Q8 FILTER ON RELATED ROW (ANON)", 1, black)

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

func fillRect(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	draw.Draw(img, image.Rect(x0, y0, x1, y1), &image.Uniform{c}, image.Point{}, draw.Src)
}

func textWidth(s string, scale int) int { return len(s) * 6 * scale }

func drawText(img *image.RGBA, x, y int, s string, scale int, c color.Color) {
	for i, r := range strings.ToUpper(s) {
		rows, ok := glyphs[r]
		if !ok {
			continue
		}
		for row, bits := range rows {
			for col := 0; col < 5; col++ {
				if bits[col] == '1' {
					px := x + (i*6+col)*scale
					py := y + row*scale
					fillRect(img, px, py, px+scale, py+scale, c)
				}
			}
		}
	}
}

// glyphs is a 5×7 bitmap font.
var glyphs = map[rune][7]string{
	' ': {"00000", "00000", "00000", "00000", "00000", "00000", "00000"},
	'A': {"01110", "10001", "10001", "11111", "10001", "10001", "10001"},
	'B': {"11110", "10001", "10001", "11110", "10001", "10001", "11110"},
	'C': {"01110", "10001", "10000", "10000", "10000", "10001", "01110"},
	'D': {"11110", "10001", "10001", "10001", "10001", "10001", "11110"},
	'E': {"11111", "10000", "10000", "11110", "10000", "10000", "11111"},
	'F': {"11111", "10000", "10000", "11110", "10000", "10000", "10000"},
	'G': {"01110", "10001", "10000", "10111", "10001", "10001", "01111"},
	'H': {"10001", "10001", "10001", "11111", "10001", "10001", "10001"},
	'I': {"01110", "00100", "00100", "00100", "00100", "00100", "01110"},
	'J': {"00111", "00010", "00010", "00010", "00010", "10010", "01100"},
	'K': {"10001", "10010", "10100", "11000", "10100", "10010", "10001"},
	'L': {"10000", "10000", "10000", "10000", "10000", "10000", "11111"},
	'M': {"10001", "11011", "10101", "10101", "10001", "10001", "10001"},
	'N': {"10001", "10001", "11001", "10101", "10011", "10001", "10001"},
	'O': {"01110", "10001", "10001", "10001", "10001", "10001", "01110"},
	'P': {"11110", "10001", "10001", "11110", "10000", "10000", "10000"},
	'Q': {"01110", "10001", "10001", "10001", "10101", "10010", "01101"},
	'R': {"11110", "10001", "10001", "11110", "10100", "10010", "10001"},
	'S': {"01111", "10000", "10000", "01110", "00001", "00001", "11110"},
	'T': {"11111", "00100", "00100", "00100", "00100", "00100", "00100"},
	'U': {"10001", "10001", "10001", "10001", "10001", "10001", "01110"},
	'V': {"10001", "10001", "10001", "10001", "10001", "01010", "00100"},
	'W': {"10001", "10001", "10001", "10101", "10101", "10101", "01010"},
	'X': {"10001", "10001", "01010", "00100", "01010", "10001", "10001"},
	'Y': {"10001", "10001", "01010", "00100", "00100", "00100", "00100"},
	'Z': {"11111", "00001", "00010", "00100", "01000", "10000", "11111"},
	'0': {"01110", "10001", "10011", "10101", "11001", "10001", "01110"},
	'1': {"00100", "01100", "00100", "00100", "00100", "00100", "01110"},
	'2': {"01110", "10001", "00001", "00010", "00100", "01000", "11111"},
	'3': {"11111", "00010", "00100", "00010", "00001", "10001", "01110"},
	'4': {"00010", "00110", "01010", "10010", "11111", "00010", "00010"},
	'5': {"11111", "10000", "11110", "00001", "00001", "10001", "01110"},
	'6': {"00110", "01000", "10000", "11110", "10001", "10001", "01110"},
	'7': {"11111", "00001", "00010", "00100", "01000", "01000", "01000"},
	'8': {"01110", "10001", "10001", "01110", "10001", "10001", "01110"},
	'9': {"01110", "10001", "10001", "01111", "00001", "00010", "01100"},
	'.': {"00000", "00000", "00000", "00000", "00000", "01100", "01100"},
	',': {"00000", "00000", "00000", "00000", "01100", "00100", "01000"},
	'/': {"00000", "00001", "00010", "00100", "01000", "10000", "00000"},
	':': {"00000", "01100", "01100", "00000", "01100", "01100", "00000"},
	'-': {"00000", "00000", "00000", "11111", "00000", "00000", "00000"},
	'(': {"00010", "00100", "01000", "01000", "01000", "00100", "00010"},
	')': {"01000", "00100", "00010", "00010", "00010", "00100", "01000"},
	'%': {"11000", "11001", "00010", "00100", "01000", "10011", "00011"},
	'+': {"00000", "00100", "00100", "11111", "00100", "00100", "00000"},
	'=': {"00000", "00000", "11111", "00000", "11111", "00000", "00000"},
}
