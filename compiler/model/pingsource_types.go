package model

// PingSource sends an event on a cron schedule.
type PingSource struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta     `json:"metadata"`
	Spec     PingSourceSpec `json:"spec,omitempty" knc:"optional"`
	Status   *SourceStatus  `json:"status,omitempty"`
}

// PingSourceSpec is a PingSource's desired state.
type PingSourceSpec struct {
	SourceSpec `json:",inline"`
	// Schedule is a cron schedule; Knative defaults it to every minute.
	Schedule    string `json:"schedule,omitempty"`
	Timezone    string `json:"timezone,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	Data        string `json:"data,omitempty"`
	DataBase64  string `json:"dataBase64,omitempty"`
}

// DefaultPingSchedule is Knative's schedule of a PingSource that gives
// none: every minute.
const DefaultPingSchedule = "* * * * *"

func (p *PingSource) GetMetadata() *ObjectMeta   { return &p.Metadata }
func (p *PingSource) GetSourceSpec() *SourceSpec { return &p.Spec.SourceSpec }

// SetDefaults fills in the namespace, the schedule and the namespace of
// the sink's ref.
func (p *PingSource) SetDefaults(d Defaults) {
	defaultNamespace(&p.Metadata, d)
	if p.Spec.Schedule == "" {
		p.Spec.Schedule = DefaultPingSchedule
	}
	defaultDestination(p.Spec.Sink, p.Metadata.Namespace)
}
