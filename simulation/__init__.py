"""Scene simulator: numpy ray-cast renders of table games that look like photographs and carry exact truth.

Imports only ``geometry`` and ``calibration`` (never ``vision`` or ``api``).

Public API
- `simulation.camera_rig.random_camera(rng, *, image_size_wh_px, ...) -> CameraModel`
- `simulation.photo.PhotoSettings`, `finish_photo(linear_rgb, rng, *, settings) -> BGR uint8`,
  `encode_jpeg(bgr, quality) -> bytes`
- `simulation.raycaster.RayCaster(camera, env, primitives, rng=...).render()`: the generic ray caster
  (`simulation.primitives`: `Disc`, `Pot`, `Ellipsoid`, `Box`; `simulation.render_style.random_style`)
- `simulation.tiddlywinks_scenes.random_scene(rng, kind)`, `SCENE_KINDS`, `rest_on(...)`
- `simulation.tiddlywinks_render.render_tiddlywinks(scene, camera, rng, ...) -> Render`, `truth_document(...)`
- `simulation.calibration_frames`: the ChArUco board texture, poses and truth
- `simulation.shot_video.render_shot_video(out_dir, name, rig, rng, outcome=...)`
- `simulation.generate`: the batch generators behind ``tableref simulate``
- `simulation.build_samples`: regenerates ``sample_images``
"""
