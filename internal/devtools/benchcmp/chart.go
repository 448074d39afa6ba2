package benchcmp

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// contenderColors keep each contender's colour the same in every chart.
var contenderColors = map[string]color.RGBA{
	"pgreflect":      {47, 111, 223, 255},
	"ceiling":        {140, 140, 140, 255},
	"ceiling-duties": {96, 96, 96, 255},
	"postgraphile":   {224, 123, 57, 255},
	"postgraphile5":  {166, 60, 140, 255},
}

// WriteChart draws requests per second per query, one bar per contender, as a PNG.
func (r *Results) WriteChart(path string) error {
	groups := make([]string, len(r.Queries))
	for i, q := range r.Queries {
		groups[i] = q.Name
	}
	return barChart{
		title:      fmt.Sprintf("REQUESTS PER SECOND, HIGHER IS BETTER (%d CONNECTIONS, %d CPUS)", r.Setup.Connections, r.Machine.CPUs),
		groups:     groups,
		contenders: r.Contenders,
		value: func(g int, name string) (float64, bool) {
			if c := r.Cell(name, r.Queries[g].Name); c != nil {
				return c.ReqPerSec, true
			}
			return 0, false
		},
		format: "%.0f",
		footer: []string{
			"Q1 FIRST ACCOUNT  Q2 NEWEST POSTS+BLOG  Q3 ACCOUNTS+BLOGS  Q4 INSERT (USER)  Q5 BLOGS+POSTS (USER, RLS)",
			"EXTENSIONS: Q6 UPSERT (USER)  Q7 POST+2 COMMENTS NESTED INSERT (USER)  Q8 FILTER ON RELATED ROW (ANON)",
		},
	}.write(path)
}

// CurveCharts are the PNG files WriteCurveCharts writes, by curve, with what each shows.
var CurveCharts = map[string][]struct{ File, Shows string }{
	"rows": {{"curve-rows.png", "MB per second by rows per response"}},
	"connections": {
		{"curve-connections.png", "requests per second by concurrent connections"},
		{"curve-connections-p99.png", "p99 latency by concurrent connections"},
	},
}

// WriteCurveCharts draws the cost curves into dir, as the files of CurveCharts: the rows curve in MB/s, the
// connections curve in req/s and p99.
func (r *Results) WriteCurveCharts(dir string) error {
	for _, c := range r.Curves {
		var charts []barChart
		switch c.Name {
		case "rows":
			charts = []barChart{c.chart(fmt.Sprintf("MB PER SECOND BY ROWS PER RESPONSE, HIGHER IS BETTER (%d CONNECTIONS)", c.Connections),
				"%.1f", func(p CurvePoint) float64 { return p.BytesPerSec / 1e6 })}
		case "connections":
			charts = []barChart{
				c.chart(fmt.Sprintf("REQUESTS PER SECOND BY CONCURRENT CONNECTIONS, HIGHER IS BETTER (%s)", c.Query),
					"%.0f", func(p CurvePoint) float64 { return p.ReqPerSec }),
				c.chart(fmt.Sprintf("P99 MS BY CONCURRENT CONNECTIONS, LOWER IS BETTER (%s)", c.Query),
					"%.1f", func(p CurvePoint) float64 { return p.P99Ms }),
			}
		}
		for i, ch := range charts {
			if err := ch.write(filepath.Join(dir, CurveCharts[c.Name][i].File)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Curve) chart(title, format string, measure func(CurvePoint) float64) barChart {
	levels := c.levels()
	groups := make([]string, len(levels))
	for i, l := range levels {
		groups[i] = levelLabel(l)
	}
	return barChart{title: title, groups: groups, contenders: c.contenders(), format: format,
		value: func(g int, name string) (float64, bool) {
			if p := c.Point(name, levels[g]); p != nil {
				return measure(*p), true
			}
			return 0, false
		},
		footer: []string{strings.ToUpper(c.Level)},
	}
}

// barChart is a PNG of grouped bars: a group per label, a bar per contender, each bar labelled with its value.
// The standard library has no text rendering, so labels use a small built-in bitmap font (upper case, digits,
// a few signs).
type barChart struct {
	title      string
	groups     []string
	contenders []string
	value      func(group int, contender string) (float64, bool)
	format     string
	footer     []string
}

func (c barChart) write(path string) error {
	const (
		w, h                   = 1100, 560
		left, right, top, base = 90, 30, 80, 490
		scale                  = 2
	)
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{255, 255, 255, 255}}, image.Point{}, draw.Src)
	black := color.RGBA{30, 30, 30, 255}
	grid := color.RGBA{225, 225, 225, 255}

	maxValue := 0.0
	for g := range c.groups {
		for _, name := range c.contenders {
			if v, ok := c.value(g, name); ok {
				maxValue = math.Max(maxValue, v)
			}
		}
	}
	step := niceStep(maxValue / 5)
	yMax := step * math.Ceil(maxValue/step)
	if yMax == 0 {
		yMax = 1
	}
	y := func(v float64) int { return base - int(v/yMax*float64(base-top)) }
	for v := 0.0; v <= yMax+step/2; v += step {
		fillRect(img, left, y(v), w-right, y(v)+1, grid)
		label := strconv.FormatFloat(v, 'f', -1, 64)
		drawText(img, left-10-textWidth(label, scale), y(v)-7, label, scale, black)
	}
	fillRect(img, left, top, left+1, base, black)
	fillRect(img, left, base, w-right, base+1, black)

	drawText(img, left, 20, c.title, scale, black)
	lx := left
	for _, name := range c.contenders {
		fillRect(img, lx, 52, lx+16, 66, contenderColors[name])
		drawText(img, lx+22, 52, name, scale, black)
		lx += 22 + textWidth(name, scale) + 30
	}

	groupW := (w - right - left) / max(1, len(c.groups))
	barW := (groupW - 40) / max(1, len(c.contenders))
	for g, group := range c.groups {
		gx := left + g*groupW + 20
		for ci, name := range c.contenders {
			v, ok := c.value(g, name)
			if !ok {
				continue
			}
			x0 := gx + ci*barW
			fillRect(img, x0+2, y(v), x0+barW-2, base, contenderColors[name])
			label := fmt.Sprintf(c.format, v)
			drawText(img, x0+(barW-textWidth(label, 1))/2, y(v)-10, label, 1, black)
		}
		drawText(img, gx+(groupW-40-textWidth(group, scale))/2, base+12, group, scale, black)
	}
	for i, line := range c.footer {
		drawText(img, left, base+40+14*i, line, 1, black)
	}

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
