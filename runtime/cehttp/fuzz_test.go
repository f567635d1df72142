package cehttp

import (
	"testing"
)

// FuzzReadRequest checks that ReadRequest and the SDK's decoding accept and
// reject the same requests, and decode the same event when both accept.
// The inputs are the header lines of a POST and its body.
func FuzzReadRequest(f *testing.F) {
	for _, seed := range differentialSeeds {
		f.Add(seed.headers, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, headers string, body []byte) {
		compareWithSDK(t, rawRequest(headers, body))
	})
}

// differentialSeeds are requests on which ReadRequest must agree with the
// SDK. They seed FuzzReadRequest and run as a plain test.
var differentialSeeds = []struct{ headers, body string }{
	{validBinaryHeaders, ""},
	{validBinaryHeaders + "Content-Type: application/json\r\n", `{"a":1}`},
	{validBinaryHeaders + "Ce-Subject: s\r\nCe-Time: 2024-05-06T07:08:09Z\r\nCe-Dataschema: http://e/s\r\nCe-Ext1: v\r\n", "data"},
	{validBinaryHeaders + "Ce-Time: 0001-01-01T00:00:00Z\r\n", ""},
	{validBinaryHeaders + "Ce-Time: 2024-05-06T07:08:09+02:00\r\n", ""},
	{validBinaryHeaders + "Ce-Time: \r\n", ""},
	{validBinaryHeaders + "Ce-Subject: \r\nCe-Dataschema: \r\nContent-Type: \r\n", ""},
	{validBinaryHeaders + "Ce-: x\r\n", ""},
	{validBinaryHeaders + "Ce-Data: x\r\n", ""},
	{validBinaryHeaders + "Ce-Specversion: 0.3\r\n", ""},
	{validBinaryHeaders + "Ce-Id: second\r\n", ""},
	{validBinaryHeaders + "Ce-\xc3\x80: x\r\n", ""},
	{"Ce-Specversion: 1.0\r\nCe-Id: 1\r\nCe-Source: \r\nCe-Type: t\r\n", ""},
	{"Ce-Specversion: 1.0\r\nCe-Id: 1\r\nCe-Source: %zz\r\nCe-Type: t\r\n", ""},
	{"Ce-Specversion: 1.0\r\nCe-Id: 1\r\nCe-Source: mailto:a@b\r\nCe-Type:  \r\n", ""},
	{"Ce-Specversion: 0.3\r\nCe-Id: 1\r\nCe-Source: /s\r\nCe-Type: t\r\n", ""},
	{"Ce-Specversion: 1.0\r\nCe-Id: 1\r\nCe-Source: /s\r\nCe-Type: t\r\nContent-Type: application/cloudevents+xml\r\n", "<x/>"},
	{"Content-Type: application/cloudevents+json\r\n", `{"specversion":"1.0","id":"1","source":"/s","type":"t","data":"text"}`},
	{"Content-Type: Application/CloudEvents+JSON\r\n", `{"specversion":"1.0","id":"1","source":"/s","type":"t","datacontenttype":"text/plain","data":"text"}`},
	{"Content-Type: application/cloudevents+json\r\n", `{"specversion":"1.0","id":"1","source":"/s","type":"t","data_base64":"AAEC","e1":true,"e2":-3,"e3":1.5}`},
	{"Content-Type: application/cloudevents+json\r\n", `{"specversion":"1.0","id":"1","source":"/s","type":"t","time":"2024-05-06T07:08:09.5Z","subject":"","dataschema":"x"}`},
	{"Content-Type: application/cloudevents+json\r\n", `{"specversion":"1.0","id":"1","source":"/s","type":"t","ext":{"nested":1}}`},
	{"Content-Type: application/cloudevents+json\r\n", `{"id":"1","specversion":"1.0","datacontenttype":"application/json","data":[1, 2]}`},
	{"Content-Type: application/cloudevents+json\r\n", `null`},
	{"Content-Type: application/cloudevents+json\r\n", `{"specversion":"0.3","id":"1","source":"/s","type":"t"}`},
	{"Content-Type: application/cloudevents-batch+json\r\n", `[{"specversion":"1.0","id":"1","source":"/s","type":"t"}]`},
	{"Content-Type: text/plain\r\n", "hello"},
}

func TestReadRequestMatchesSDK(t *testing.T) {
	for _, seed := range differentialSeeds {
		compareWithSDK(t, rawRequest(seed.headers, []byte(seed.body)))
	}
}
