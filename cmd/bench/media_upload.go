package main

// The upload half of the media phase: a big WAV streamed by the client,
// never held whole in memory on either side, against dd to the same disk.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const (
	mediaUploadPath = "/api/media/file"
	wavHeaderLen    = 44
	sampleChunk     = 1 << 20
)

// wavStream is a 16-bit stereo 44.1 kHz WAV of size bytes whose samples
// are pseudo-random: a 1 MiB block drawn from a ChaCha8 stream seeded by
// seed, repeated, each repetition stamped with the seed and its index so
// that no two MiB of one file or of two seeds are equal. It is cheap for
// the client (one MiB of random bytes per file) and never in memory whole.
type wavStream struct {
	hdr   [wavHeaderLen]byte
	block []byte
	size  int64 // of the whole file
	off   int64
	seed  uint64
}

func newWAVStream(size int64, seed uint64) *wavStream {
	w := &wavStream{size: size, seed: seed, block: make([]byte, sampleChunk)}
	data := uint32(size - wavHeaderLen)
	h := w.hdr[:0]
	h = append(h, "RIFF"...)
	h = binary.LittleEndian.AppendUint32(h, 36+data)
	h = append(h, "WAVEfmt "...)
	h = binary.LittleEndian.AppendUint32(h, 16)
	h = binary.LittleEndian.AppendUint16(h, 1) // PCM
	h = binary.LittleEndian.AppendUint16(h, 2) // stereo
	h = binary.LittleEndian.AppendUint32(h, 44100)
	h = binary.LittleEndian.AppendUint32(h, 44100*4) // byte rate
	h = binary.LittleEndian.AppendUint16(h, 4)       // block align
	h = binary.LittleEndian.AppendUint16(h, 16)      // bits per sample
	h = append(h, "data"...)
	binary.LittleEndian.AppendUint32(h, data)
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	rand.NewChaCha8(key).Read(w.block) //nolint:errcheck // never fails
	return w
}

func (w *wavStream) Read(p []byte) (int, error) {
	if w.off >= w.size {
		return 0, io.EOF
	}
	if w.off < wavHeaderLen {
		n := copy(p, w.hdr[w.off:])
		w.off += int64(n)
		return n, nil
	}
	data := w.off - wavHeaderLen
	i, at := data/sampleChunk, data%sampleChunk
	if at == 0 {
		binary.LittleEndian.PutUint64(w.block[0:], w.seed)
		binary.LittleEndian.PutUint64(w.block[8:], uint64(i))
	}
	n := copy(p, w.block[at:min(int64(len(w.block)), at+w.size-w.off)])
	w.off += int64(n)
	return n, nil
}

// multipartBody is a multipart body of the fields app and name and then
// the part file read from file (size bytes), and its exact length: the
// server sees a Content-Length, and nothing is buffered but the parts'
// headers.
func multipartBody(app, name, ctype string, file io.Reader, size int64) (io.Reader, int64, string) {
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	_ = mw.WriteField("app", app)
	_ = mw.WriteField("name", name)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename="%s"`, name))
	h.Set("Content-Type", ctype)
	_, _ = mw.CreatePart(h)
	tail := "\r\n--" + mw.Boundary() + "--\r\n"
	return io.MultiReader(&head, file, strings.NewReader(tail)), int64(head.Len()) + size + int64(len(tail)), mw.FormDataContentType()
}

// postFile uploads size bytes of file to the app's library and decodes
// the answer (201).
func postFile(ctx context.Context, hc *http.Client, p *serverPhase, name, ctype string, file io.Reader, size int64) (mediaFile, error) {
	body, length, mtype := multipartBody(p.app.ID, name, ctype, file, size)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.srv.base+mediaUploadPath, body)
	if err != nil {
		return mediaFile{}, err
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", mtype)
	req.Header.Set("Authorization", "Bearer "+p.admin)
	resp, err := hc.Do(req)
	if err != nil {
		return mediaFile{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return mediaFile{}, err
	}
	if resp.StatusCode != http.StatusCreated {
		return mediaFile{}, &statusError{method: http.MethodPost, path: mediaUploadPath, status: resp.StatusCode, body: snippet(data, 500)}
	}
	var f mediaFile
	if err := json.Unmarshal(data, &f); err != nil {
		return mediaFile{}, fmt.Errorf("decode the answer: %w (%s)", err, snippet(data, 300))
	}
	if f.Size != size || f.SHA256 == "" || f.ID == "" {
		return f, fmt.Errorf("uploaded %d bytes, the answer says %d bytes, sha256 %q, id %q", size, f.Size, f.SHA256, f.ID)
	}
	return f, nil
}

// ddRun writes mb MiB of zeros into dir/dd-<round>.tmp with dd (1 MiB
// blocks, fsync at the end) and times it: the disk's rate for one big
// file, what an upload is compared with. The file is kept, as the
// uploads are, until the phase's directory goes: on this machine's ext4
// (mounted with discard, on a virtual disk) a write into blocks just
// freed ran up to several times faster than one into new blocks, so
// removing dd's file each round made whatever came next look fast.
func ddRun(ctx context.Context, dir string, round, mb int) (time.Duration, string, error) {
	out := filepath.Join(dir, fmt.Sprintf("dd-%d.tmp", round))
	cmd := exec.CommandContext(ctx, "dd", "if=/dev/zero", "of="+out, "bs=1M", fmt.Sprintf("count=%d", mb), "conv=fsync")
	t0 := time.Now()
	msg, err := cmd.CombinedOutput()
	took := time.Since(t0)
	if err != nil {
		return 0, "", fmt.Errorf("dd: %w: %s", err, msg)
	}
	lines := strings.Split(strings.TrimSpace(string(msg)), "\n")
	return took, lines[len(lines)-1], nil
}

// measureUploads alternates dd and an upload of the same size,
// -media-rounds times, and reports the medians and their ratio.
func measureUploads(ctx context.Context, cfg config, p *serverPhase, res *results) error {
	size := int64(cfg.mediaUploadMB) << 20
	dir := filepath.Join(p.dir, "data")
	hc := newMediaClient(1)
	defer hc.CloseIdleConnections()
	progressf("media: %d rounds of dd and an upload of %d MiB each into %s", cfg.mediaRounds, cfg.mediaUploadMB, dir)
	var ddRates, upRates, shares []float64
	var cpu kindCPU
	var ddLast string
	seen := map[string]bool{}
	for r := range cfg.mediaRounds {
		var took, upTook time.Duration
		var last string
		var f mediaFile
		// Odd rounds upload first: neither comes always after the other.
		for _, upload := range []bool{r%2 == 1, r%2 == 0} {
			if !upload {
				var err error
				if took, last, err = ddRun(ctx, dir, r, cfg.mediaUploadMB); err != nil {
					return err
				}
				continue
			}
			w := newWAVStream(size, uint64(r+1)<<32|uint64(time.Now().UnixNano()&0xffffffff))
			s0, b0, m0, t0 := p.srv.cpuSeconds(), selfCPUSeconds(), machineCPU(), time.Now()
			var err error
			if f, err = postFile(ctx, hc, p, fmt.Sprintf("bench-%d.wav", r), "audio/wav", w, size); err != nil {
				return err
			}
			upTook = time.Since(t0)
			cpu.wall += upTook.Seconds()
			cpu.server += p.srv.cpuSeconds() - s0
			cpu.bench += selfCPUSeconds() - b0
			cpu.machine += (machineCPU().busy - m0.busy) / clockTicks
		}
		ddLast = last
		if f.MIME != "audio/wav" || seen[f.SHA256] {
			return fmt.Errorf("upload %d: type %s, sha256 %s (seen before: %v)", r, f.MIME, f.SHA256, seen[f.SHA256])
		}
		seen[f.SHA256] = true
		ddRate, upRate := float64(size)/took.Seconds(), float64(size)/upTook.Seconds()
		ddRates, upRates, shares = append(ddRates, ddRate), append(upRates, upRate), append(shares, upRate/ddRate)
		progressf("media round %d/%d: dd %s in %s (%.0f MB/s), upload in %s (%.0f MB/s): %.0f%%", r+1, cfg.mediaRounds,
			sizeMiB(size), took.Round(time.Millisecond), ddRate/1e6, upTook.Round(time.Millisecond), upRate/1e6, 100*upRate/ddRate)
	}
	perMiB := func(s float64) float64 { return 1000 * s / (float64(cfg.mediaRounds) * float64(size>>20)) }
	res.add(figure{name: "media: dd " + sizeMiB(size) + ", MB/s", value: median(ddRates) / 1e6, unit: "MB/s",
		detail: fmt.Sprintf("dd if=/dev/zero of=CMS_DATA_DIR/dd-<round>.tmp bs=1M count=%d conv=fsync (files kept, as the uploads are), median of %d rounds; last: %s",
			cfg.mediaUploadMB, cfg.mediaRounds, ddLast)})
	res.add(figure{name: "media: upload " + sizeMiB(size) + ", MB/s", value: median(upRates) / 1e6, unit: "MB/s",
		detail: fmt.Sprintf("a WAV streamed as multipart to POST %s (201 and the answer read back), median of %d rounds; "+
			"CPU per MiB: server %.2f ms, bench %.2f ms, the rest of the machine %.2f ms", mediaUploadPath, cfg.mediaRounds,
			perMiB(cpu.server), perMiB(cpu.bench), perMiB(cpu.machine-cpu.server-cpu.bench))})
	res.add(figure{name: "media: upload / dd", value: median(shares), percent: true, target: targetUploadShare,
		detail: "median of the rounds' ratios; per round: " + percents(shares)})
	return nil
}

func sizeMiB(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }
