package main

import (
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// MediaConfig configures the media library (CMS_MEDIA_*).
type MediaConfig struct {
	// Storage is "local" (default: under CMS_DATA_DIR/media) or "s3".
	Storage string
	S3      S3Config
	// MaxBytes bounds an upload (CMS_MEDIA_MAX_MB, default 100).
	MaxBytes int64
	// PublicURL is the address apps reach the server at, which file URLs
	// start with (CMS_PUBLIC_URL, default http://localhost:<port>).
	PublicURL string
	// SigningKey signs file URLs of apps whose media is not public, and
	// transform URLs (CMS_MEDIA_SIGNING_KEY; default: a key generated once
	// and kept in CMS_DATA_DIR/media-signing.key). Set it when several
	// processes serve.
	SigningKey string
	// Transforms: "open" (default: presets, signed transforms, and any
	// transform of an allowed size) or "signed" (presets and signed
	// transforms only) (CMS_MEDIA_TRANSFORMS).
	Transforms string
	// Types are the MIME types uploads may be (CMS_MEDIA_TYPES,
	// comma-separated; default: web images, video, audio, PDF, text, HTML
	// and CSV). Executables and archives are never accepted.
	Types []string
	// ClamdAddr scans every upload with clamd when set
	// (CMS_MEDIA_CLAMD, "unix:/run/clamav/clamd.ctl" or "tcp:host:3310").
	ClamdAddr string
	// UploadStall is how long a resumable upload's chunk may send nothing
	// before its request ends, keeping what came (CMS_MEDIA_UPLOAD_STALL,
	// default 60s).
	UploadStall time.Duration
}

// S3Config is the s3 storage's (CMS_MEDIA_S3_*).
type S3Config struct {
	Endpoint, Bucket, Region, AccessKey, SecretKey, Prefix string
	UseSSL                                                 bool
}

func loadMediaConfig(httpAddr string) (MediaConfig, error) {
	c := MediaConfig{
		Storage:    env("CMS_MEDIA_STORAGE", "local"),
		PublicURL:  strings.TrimSuffix(os.Getenv("CMS_PUBLIC_URL"), "/"),
		SigningKey: os.Getenv("CMS_MEDIA_SIGNING_KEY"),
		Transforms: env("CMS_MEDIA_TRANSFORMS", "open"),
		ClamdAddr:  os.Getenv("CMS_MEDIA_CLAMD"),
		S3: S3Config{Endpoint: os.Getenv("CMS_MEDIA_S3_ENDPOINT"), Bucket: os.Getenv("CMS_MEDIA_S3_BUCKET"),
			Region: os.Getenv("CMS_MEDIA_S3_REGION"), AccessKey: os.Getenv("CMS_MEDIA_S3_ACCESS_KEY"),
			SecretKey: os.Getenv("CMS_MEDIA_S3_SECRET_KEY"), Prefix: os.Getenv("CMS_MEDIA_S3_PREFIX"),
			UseSSL: os.Getenv("CMS_MEDIA_S3_USE_SSL") == "true"},
	}
	for _, t := range strings.Split(os.Getenv("CMS_MEDIA_TYPES"), ",") {
		if t = strings.ToLower(strings.TrimSpace(t)); t != "" {
			if !strings.Contains(t, "/") {
				return c, fmt.Errorf("CMS_MEDIA_TYPES: %q is not a MIME type (like image/jpeg)", t)
			}
			if neverAccepted(t) {
				return c, fmt.Errorf("CMS_MEDIA_TYPES: %s is an executable or an archive, which are never accepted", t)
			}
			c.Types = append(c.Types, t)
		}
	}
	var err error
	if c.UploadStall, err = duration("CMS_MEDIA_UPLOAD_STALL", 60*time.Second); err != nil {
		return c, err
	}
	mb, err := integer("CMS_MEDIA_MAX_MB", 100)
	if err != nil {
		return c, err
	}
	if mb < 1 {
		return c, fmt.Errorf("CMS_MEDIA_MAX_MB: %d, want 1 or more", mb)
	}
	c.MaxBytes = int64(mb) << 20
	switch c.Storage {
	case "local":
	case "s3":
		if c.S3.Endpoint == "" || c.S3.Bucket == "" {
			return c, fmt.Errorf("CMS_MEDIA_STORAGE=s3 needs CMS_MEDIA_S3_ENDPOINT and CMS_MEDIA_S3_BUCKET")
		}
	default:
		return c, fmt.Errorf("CMS_MEDIA_STORAGE: %q, want local or s3", c.Storage)
	}
	if c.Transforms != "open" && c.Transforms != "signed" {
		return c, fmt.Errorf("CMS_MEDIA_TRANSFORMS: %q, want open or signed", c.Transforms)
	}
	if c.PublicURL == "" {
		_, port, err := net.SplitHostPort(httpAddr)
		if err != nil || port == "" {
			port = "8080"
		}
		c.PublicURL = "http://localhost:" + port
	}
	if !strings.HasPrefix(c.PublicURL, "http://") && !strings.HasPrefix(c.PublicURL, "https://") {
		return c, fmt.Errorf("CMS_PUBLIC_URL: %q, want an http or https address", c.PublicURL)
	}
	return c, nil
}

// neverAccepted are the types no configuration may allow: programs and
// archives (which hide anything, zip bombs included).
func neverAccepted(t string) bool {
	for _, bad := range []string{"application/x-executable", "application/x-elf", "application/vnd.microsoft.portable-executable",
		"application/x-msdownload", "application/x-dosexec", "application/x-mach-binary", "application/x-sharedlib",
		"text/x-shellscript", "application/x-sh", "application/zip", "application/gzip", "application/x-gzip",
		"application/x-7z-compressed", "application/x-rar-compressed", "application/vnd.rar", "application/x-tar",
		"application/x-bzip2", "application/x-xz", "application/zstd", "application/java-archive"} {
		if t == bad {
			return true
		}
	}
	return false
}
