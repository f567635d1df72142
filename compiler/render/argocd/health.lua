-- Health of a Knative Broker, Trigger, Channel, Subscription, Sequence or
-- Parallel served by knc, from the status its runtime writes.
local hs = {}
if obj.metadata ~= nil and obj.metadata.deletionTimestamp ~= nil then
  hs.status = "Progressing"
  hs.message = "Being deleted"
  return hs
end
if obj.status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for knc's runtime to report a status"
  return hs
end
local generation = obj.metadata.generation
if generation ~= nil and (obj.status.observedGeneration == nil or obj.status.observedGeneration < generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for knc's runtime to observe generation " .. tostring(generation)
  return hs
end
if obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" then
      local message = c.reason or ""
      if c.message ~= nil and c.message ~= "" then
        message = message .. ": " .. c.message
      end
      hs.message = message
      if c.status == "True" then
        hs.status = "Healthy"
      elseif c.status == "False" then
        hs.status = "Degraded"
      else
        hs.status = "Progressing"
      end
      return hs
    end
  end
end
hs.status = "Progressing"
hs.message = "Waiting for the Ready condition"
return hs
