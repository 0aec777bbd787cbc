//! The GPU context: the device with the adapter's own limits, and the generic helpers
//! (buffers, pipelines, dispatch, readback).

use std::sync::{Arc, Mutex};

use wgpu::util::DeviceExt;

use super::adapter::{backend_names, best_adapter, instance, AdapterRequest, AdapterSummary};
use super::profile::{Profile, Recording, PROFILE_FEATURES};
use super::tuning::Tuning;
use super::{reflect, shaders};
use crate::{invalid, Error, Result};

/// A compute pipeline with the bindings its shader declares.
#[derive(Clone)]
pub struct Pipeline {
    pub raw: wgpu::ComputePipeline,
    label: String,
    bindings: Vec<reflect::Binding>,
}

/// Device, queue and the adapter they came from.
pub struct GpuContext {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter: AdapterSummary,
    /// The kernels' shapes on this adapter.
    pub tuning: Tuning,
    handle: wgpu::Adapter,
    /// The timestamps of the profile being recorded, if one is.
    profile: Mutex<Option<Recording>>,
    /// The device's pipelines by label, entry point and source, so that every engine of a
    /// process that composes the same shader compiles it once (on lavapipe a time block in
    /// registers takes seconds).
    pipelines: Arc<Mutex<PipelineCache>>,
}

type PipelineCache = std::collections::HashMap<(String, String, String), Pipeline>;

/// Threads per workgroup of every kernel (`WORKGROUP` in `shaders/common.wgsl`).
pub const WORKGROUP: u32 = 64;

impl GpuContext {
    /// Opens the best adapter matching the request, with the adapter's own limits.
    pub fn new(request: &AdapterRequest) -> Result<Arc<Self>> {
        let adapter = best_adapter(request).ok_or_else(|| {
            Error::NoAdapter(format!(
                " for backends {}{}",
                backend_names(request.backends),
                request
                    .name
                    .as_ref()
                    .map(|n| format!(" named like '{n}'"))
                    .unwrap_or_default()
            ))
        })?;
        Self::open(adapter)
    }

    /// A device with the adapter's own limits.
    fn open(handle: wgpu::Adapter) -> Result<Arc<Self>> {
        let summary = AdapterSummary {
            info: handle.get_info(),
            limits: handle.limits(),
            features: handle.features(),
        };
        let tuning = Tuning::of(&summary)?;
        let desc = wgpu::DeviceDescriptor {
            label: Some("wafer-emu"),
            required_limits: summary.limits.clone(),
            required_features: summary.features & (PROFILE_FEATURES | wgpu::Features::SUBGROUP),
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(handle.request_device(&desc))
            .map_err(|e| Error::Gpu(format!("{} refused a device: {e}", summary.info.name)))?;
        Ok(Arc::new(Self {
            device,
            queue,
            adapter: summary,
            tuning,
            handle,
            profile: Mutex::new(None),
            pipelines: Arc::default(),
        }))
    }

    /// `count` devices for one job: this one first, then new devices spread round-robin over
    /// this adapter and the other adapters of the same model and backend (several identical
    /// GPUs of a desktop), or all on this adapter when it is the only one.
    pub fn peers(self: &Arc<Self>, count: usize) -> Result<Vec<Arc<Self>>> {
        let info = &self.adapter.info;
        // wgpu's GL devices of one adapter share its one context, and a second device's
        // thread waits on the first's lock until wgpu-hal gives up with a panic.
        if count > 1 && info.backend == wgpu::Backend::Gl {
            return Err(invalid!(
                "devices = {count} on {} (GL): allowed 1 on the GL backend, which gives every device of an adapter one shared context; use Vulkan, Metal or DX12 for several",
                info.name
            ));
        }
        let mut adapters = vec![self.handle.clone()];
        let backends = wgpu::Backends::from(info.backend);
        for other in pollster::block_on(instance(backends).enumerate_adapters(backends)) {
            let o = other.get_info();
            // Another GPU of the same model: the same arithmetic, so the same bits.
            let twin = o.name == info.name && o.device_pci_bus_id != info.device_pci_bus_id;
            if twin && o.device_type == info.device_type {
                adapters.push(other);
            }
        }
        let mut devices = vec![self.clone()];
        for i in 1..count {
            devices.push(Self::open(adapters[i % adapters.len()].clone())?);
        }
        Ok(devices)
    }

    /// This device with the kernels shaped by `tuning` instead (the same device and queue).
    pub fn retuned(&self, tuning: Tuning) -> Arc<Self> {
        Arc::new(Self {
            device: self.device.clone(),
            queue: self.queue.clone(),
            adapter: self.adapter.clone(),
            tuning,
            handle: self.handle.clone(),
            profile: Mutex::new(None),
            pipelines: self.pipelines.clone(),
        })
    }

    /// Fails, saying why, where this device cannot time its dispatches.
    pub fn check_profile(&self) -> Result<()> {
        match self.device.features().contains(PROFILE_FEATURES) {
            true => Ok(()),
            false => Err(Error::Gpu(format!(
                "{} cannot time dispatches: it lacks timestamp queries inside compute passes",
                self.describe()
            ))),
        }
    }

    /// Starts timing every dispatch recorded from now on (discarding a profile under way).
    pub fn start_profile(&self) -> Result<()> {
        self.check_profile()?;
        *self.recording() = Some(Recording::default());
        Ok(())
    }

    /// Stops timing and returns the time per kernel since [`GpuContext::start_profile`]; the
    /// recorded dispatches must have been submitted. `None` when no profile was started.
    pub fn finish_profile(&self) -> Result<Option<Profile>> {
        let recording = self.recording().take();
        recording.map(|r| r.finish(self)).transpose()
    }

    fn recording(&self) -> std::sync::MutexGuard<'_, Option<Recording>> {
        self.profile.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a dispatch of `(x, y)` workgroups of `pipeline`, which is set on `pass`, timed
    /// while a profile is recorded.
    pub fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        pipeline: &Pipeline,
        (x, y): (u32, u32),
    ) {
        let dispatch = |pass: &mut wgpu::ComputePass<'_>| pass.dispatch_workgroups(x, y, 1);
        match self.recording().as_mut() {
            Some(recording) => recording.around(&self.device, pass, &pipeline.label, dispatch),
            None => dispatch(pass),
        }
    }

    /// Checks that a buffer of `bytes` fits one storage binding of this adapter.
    pub fn check_binding(&self, what: &str, bytes: u64) -> Result<()> {
        self.check_binding_within(what, bytes, self.adapter.max_binding_bytes())
    }

    /// Checks that a buffer of `bytes` fits a storage binding of at most `max` bytes.
    pub fn check_binding_within(&self, what: &str, bytes: u64, max: u64) -> Result<()> {
        if bytes > max {
            return Err(Error::TooLarge(format!(
                "{what} needs {} MiB in one storage binding, but {} allows {} MiB per storage binding: use fewer PEs or a smaller n",
                bytes.div_ceil(1 << 20),
                self.adapter.info.name,
                max >> 20
            )));
        }
        Ok(())
    }

    /// A storage buffer holding `data`, usable as copy source and destination; running out of
    /// device memory is reported as [`Error::TooLarge`].
    pub fn storage_buffer(&self, label: &str, data: &[f32]) -> Result<wgpu::Buffer> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffer = self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(data),
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
            });
        match pollster::block_on(scope.pop()) {
            None => Ok(buffer),
            Some(e) => Err(Error::TooLarge(format!(
                "{} has no room for {label} ({} MiB): {e}; use fewer PEs or a smaller n",
                self.adapter.info.name,
                (data.len() * 4).div_ceil(1 << 20)
            ))),
        }
    }

    /// A uniform buffer holding `value`.
    pub fn uniform_buffer<T: bytemuck::Pod>(&self, label: &str, value: &T) -> wgpu::Buffer {
        self.uniform_bytes(label, bytemuck::bytes_of(value))
    }

    /// A uniform buffer holding `bytes` (a table of entries bound at dynamic offsets).
    pub fn uniform_bytes(&self, label: &str, bytes: &[u8]) -> wgpu::Buffer {
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytes,
                usage: wgpu::BufferUsages::UNIFORM,
            })
    }

    /// A compute pipeline for `entry` of `source`. Its bind-group layout holds every binding
    /// the module declares, reflected by naga, so that the pipelines of one module's entry
    /// points share one bind group even where an entry point uses only some bindings.
    pub fn pipeline(&self, label: &str, source: &str, entry: &str) -> Pipeline {
        let key = (label.to_string(), entry.to_string(), source.to_string());
        let mut pipelines = self.pipelines.lock().unwrap_or_else(|e| e.into_inner());
        pipelines
            .entry(key)
            .or_insert_with(|| self.build_pipeline(label, source, entry))
            .clone()
    }

    fn build_pipeline(&self, label: &str, source: &str, entry: &str) -> Pipeline {
        let descriptor = wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        };
        let module = if self.adapter.info.backend == wgpu::Backend::Vulkan {
            // SAFETY: on Vulkan the driver keeps storage-buffer accesses in bounds (wgpu
            // enables robust buffer access), and the shaders index their own arrays (the
            // fused tiles, with slack past their last row, and the windows) within bounds
            // by construction. naga's extra index clamps cost lavapipe 30 to 45 % on the
            // wafer kernels.
            unsafe {
                self.device.create_shader_module_trusted(
                    descriptor,
                    wgpu::ShaderRuntimeChecks {
                        bounds_checks: false,
                        ..wgpu::ShaderRuntimeChecks::checked()
                    },
                )
            }
        } else {
            self.device.create_shader_module(descriptor)
        };
        let bindings = reflect::reflect(source);
        let groups = bindings.last().map_or(0, |b| b.group + 1);
        let layouts: Vec<wgpu::BindGroupLayout> = (0..groups)
            .map(|group| {
                let entries: Vec<_> = bindings
                    .iter()
                    .filter(|b| b.group == group)
                    .map(|b| b.entry)
                    .collect();
                self.device
                    .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                        label: Some(label),
                        entries: &entries,
                    })
            })
            .collect();
        let layout_refs: Vec<Option<&wgpu::BindGroupLayout>> = layouts.iter().map(Some).collect();
        let layout = self
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(label),
                bind_group_layouts: &layout_refs,
                immediate_size: 0,
            });
        let raw = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: Some(&layout),
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            });
        Pipeline {
            raw,
            label: label.to_string(),
            bindings,
        }
    }

    /// A bind group for group 0 of `pipeline`, binding each buffer to the variable of its
    /// name. Every variable of group 0 must be given, and nothing else: a mismatch is a bug of
    /// the engine, reported with the names.
    pub fn bind_group(
        &self,
        pipeline: &Pipeline,
        buffers: &[(&str, &wgpu::Buffer)],
    ) -> wgpu::BindGroup {
        let declared: Vec<&reflect::Binding> =
            pipeline.bindings.iter().filter(|b| b.group == 0).collect();
        let names = |list: Vec<&str>| list.join(", ");
        let given = names(buffers.iter().map(|(n, _)| *n).collect());
        let wanted = names(declared.iter().map(|b| b.name.as_str()).collect());
        assert!(
            buffers.len() == declared.len()
                && buffers
                    .iter()
                    .all(|(n, _)| declared.iter().any(|b| b.name == *n)),
            "{}: shader binds [{wanted}], engine gives [{given}]",
            pipeline.label
        );
        let entries: Vec<_> = declared
            .iter()
            .map(|b| wgpu::BindGroupEntry {
                binding: b.entry.binding,
                resource: buffers
                    .iter()
                    .find(|(n, _)| *n == b.name)
                    .expect("checked above")
                    .1
                    .as_entire_binding(),
            })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&pipeline.label),
            layout: &pipeline.raw.get_bind_group_layout(0),
            entries: &entries,
        })
    }

    /// A bind group for group 0 of `pipeline` from those of the `offered` buffers that its
    /// shader declares, by name.
    pub fn bind_declared<'b>(
        &self,
        pipeline: &Pipeline,
        offered: impl IntoIterator<Item = (&'b str, &'b wgpu::Buffer)>,
    ) -> wgpu::BindGroup {
        let declared = |name: &str| {
            let mut group0 = pipeline.bindings.iter().filter(|b| b.group == 0);
            group0.any(|b| b.name == name)
        };
        let used: Vec<_> = offered.into_iter().filter(|(n, _)| declared(n)).collect();
        self.bind_group(pipeline, &used)
    }

    /// The bind group for the dispatch uniform of `pipeline` (group 1): `entry_size` bytes of
    /// `buffer`, at the dynamic offset given to each `set_bind_group`.
    pub fn dispatch_group(
        &self,
        pipeline: &Pipeline,
        buffer: &wgpu::Buffer,
        entry_size: u64,
    ) -> wgpu::BindGroup {
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("dispatch"),
            layout: &pipeline.raw.get_bind_group_layout(shaders::DISPATCH_GROUP),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer,
                    offset: 0,
                    size: std::num::NonZeroU64::new(entry_size),
                }),
            }],
        })
    }

    /// Workgroup counts `(x, y)` covering `threads` invocations within the adapter's limit per
    /// dimension (the shaders' `linear_id` undoes the split).
    pub fn dispatch_size(&self, threads: u64) -> (u32, u32) {
        split_dispatch(
            threads,
            self.adapter.limits.max_compute_workgroups_per_dimension,
        )
    }

    /// Submits and waits until the GPU is idle.
    pub fn submit_and_wait(&self, commands: wgpu::CommandBuffer) -> Result<()> {
        self.queue.submit([commands]);
        self.wait()
    }

    /// Waits until every submission has finished.
    pub fn wait(&self) -> Result<()> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| Error::Gpu(format!("waiting for the GPU failed: {e}")))
    }

    /// Copies a buffer back to the host: the one readback helper.
    pub fn read_buffer<T: bytemuck::Pod>(&self, buffer: &wgpu::Buffer) -> Result<Vec<T>> {
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: buffer.size(),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
        self.submit_and_wait(encoder.finish())?;
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        self.wait()?;
        rx.recv()
            .map_err(|e| Error::Gpu(format!("readback failed: {e}")))?
            .map_err(|e| Error::Gpu(format!("readback failed: {e}")))?;
        let data = bytemuck::cast_slice(
            &staging
                .get_mapped_range(..)
                .map_err(|e| Error::Gpu(format!("readback failed: {e}")))?,
        )
        .to_vec();
        staging.unmap();
        Ok(data)
    }

    /// The adapter's name and backend, for reports.
    pub fn describe(&self) -> String {
        format!(
            "{} ({:?})",
            self.adapter.info.name, self.adapter.info.backend
        )
    }
}

/// Point updates recorded per submission: large enough to hide the submit cost, small enough
/// to keep each submission well under any driver watchdog.
pub(crate) const UPDATES_PER_SUBMISSION: u64 = 1 << 26;
/// Cap on steps per submission (each step is a few dispatches in one compute pass).
pub(crate) const MAX_STEPS_PER_SUBMISSION: u64 = 4096;

impl GpuContext {
    /// Records `steps` steps of `points` point updates each, many per compute pass and per
    /// submission, and waits for them. `record(pass, step)` records step number `step`.
    pub fn run_steps(
        &self,
        first: u64,
        steps: u64,
        points: u64,
        record: impl Fn(&mut wgpu::ComputePass<'_>, u64),
    ) -> Result<()> {
        self.submit_chunks(first, steps, points, |encoder, chunk| {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            chunk.for_each(|s| record(&mut pass, s));
        })
    }

    /// As [`Self::run_steps`], where each step records its own passes and copies:
    /// `record(encoder, step)`.
    pub fn run_commands(
        &self,
        first: u64,
        steps: u64,
        points: u64,
        record: impl Fn(&mut wgpu::CommandEncoder, u64),
    ) -> Result<()> {
        self.submit_chunks(first, steps, points, |encoder, chunk| {
            chunk.for_each(|s| record(encoder, s));
        })
    }

    /// Records the steps `first .. first + steps` in chunks, one encoder and submission each,
    /// sized by [`UPDATES_PER_SUBMISSION`], and waits for them.
    fn submit_chunks(
        &self,
        first: u64,
        steps: u64,
        points: u64,
        record: impl Fn(&mut wgpu::CommandEncoder, std::ops::Range<u64>),
    ) -> Result<()> {
        let per_submission =
            (UPDATES_PER_SUBMISSION / points.max(1)).clamp(1, MAX_STEPS_PER_SUBMISSION);
        let mut done = 0;
        while done < steps {
            let count = per_submission.min(steps - done);
            let mut encoder = self.device.create_command_encoder(&Default::default());
            record(&mut encoder, first + done..first + done + count);
            self.queue.submit([encoder.finish()]);
            done += count;
        }
        self.wait()
    }
}

/// Workgroups `(x, y)` of `WORKGROUP` invocations covering `threads`, at most `max` per
/// dimension; `linear_id` in the shaders maps `(x, y)` back to one index.
fn split_dispatch(threads: u64, max: u32) -> (u32, u32) {
    let groups = threads.div_ceil(WORKGROUP as u64).max(1);
    let x = groups.min(max as u64);
    (x as u32, groups.div_ceil(x) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatches_split_into_two_dimensions_without_losing_threads() {
        assert_eq!(split_dispatch(1, 65535), (1, 1));
        assert_eq!(split_dispatch(64 * 65535, 65535), (65535, 1));
        assert_eq!(split_dispatch(64 * 65535 + 1, 65535), (65535, 2));
        for threads in [1u64, 63, 64, 65, 1000, 4097] {
            let (x, y) = split_dispatch(threads, 4);
            let groups = threads.div_ceil(WORKGROUP as u64);
            assert!(
                x <= 4 && x as u64 * y as u64 >= groups,
                "{threads}: ({x}, {y})"
            );
            assert_eq!(y as u64, groups.div_ceil(x as u64), "{threads}: ({x}, {y})");
        }
    }
}
