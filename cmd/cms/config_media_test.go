package main

import "testing"

// The media configuration: defaults, and values refused at start-up.
func TestMediaConfigFromEnv(t *testing.T) {
	t.Setenv("CMS_HTTP_ADDR", ":9090")
	c, err := loadConfig()
	if err != nil || c.Media.Storage != "local" || c.Media.MaxBytes != 100<<20 || c.Media.PublicURL != "http://localhost:9090" ||
		c.Media.Transforms != "open" || c.Media.Types != nil {
		t.Fatalf("defaults: %+v, %v", c.Media, err)
	}
	t.Setenv("CMS_MEDIA_TYPES", "image/png, Image/JPEG")
	t.Setenv("CMS_PUBLIC_URL", "https://cms.example.com/")
	if c, err = loadConfig(); err != nil || len(c.Media.Types) != 2 || c.Media.Types[1] != "image/jpeg" || c.Media.PublicURL != "https://cms.example.com" {
		t.Fatalf("set: %+v, %v", c.Media, err)
	}
	for name, v := range map[string]string{
		"CMS_MEDIA_TYPES":      "application/zip",
		"CMS_MEDIA_STORAGE":    "s3", // without an endpoint and bucket
		"CMS_MEDIA_MAX_MB":     "0",
		"CMS_MEDIA_TRANSFORMS": "any",
		"CMS_PUBLIC_URL":       "ftp://x",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, v)
			if _, err := loadConfig(); err == nil {
				t.Errorf("%s=%s was accepted", name, v)
			}
		})
	}
}
