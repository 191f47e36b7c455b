"""Two programs in the style of public PyTorch code, written once and run with ``lib`` = minigrad and = torch from
the same initial weights and data, compared after every training step to 1e-9 (float64):

* a variational autoencoder: Normal posterior, rsample, Bernoulli likelihood (Independent), kl_divergence
  against a Normal prior, Adam;
* REINFORCE with a baseline: a Categorical policy, log_prob of the actions taken, an entropy bonus, SGD with
  momentum.

Samples differ between the libraries, so the reparameterisation noise and the actions are data: drawn once
with NumPy and given to both (the noise through each library's standard-normal source)."""
import numpy as np
import pytest

import minigrad as mg

from .mirror import torch_or_replay, torch_or_skip

torch = torch_or_replay()   # PyTorch, or without it a stand-in that skips the tests using it

D_IN, D_HIDDEN, D_LATENT, BATCH = 12, 16, 3, 8


def _linear(lib, weight, bias):
    layer = lib.nn.Linear(weight.shape[1], weight.shape[0]).double()
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(weight))
        layer.bias.copy_(lib.tensor(bias))
    return layer


def vae_weights(seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(D_HIDDEN, D_IN), (2 * D_LATENT, D_HIDDEN), (D_HIDDEN, D_LATENT), (D_IN, D_HIDDEN)]
    return [(rng.standard_normal(s) / np.sqrt(s[1]), rng.standard_normal(s[0]) * 0.1) for s in shapes]


def vae_program(lib, weights, batches, noises):
    """Train a VAE for len(batches) steps; returns the loss and the parameters after each step."""
    D = lib.distributions
    enc1, enc2, dec1, dec2 = (_linear(lib, w, b) for w, b in weights)
    params = [p for layer in (enc1, enc2, dec1, dec2) for p in layer.parameters()]
    optimizer = lib.optim.Adam(params, lr=1e-2)
    prior = D.Normal(lib.zeros(D_LATENT, dtype=lib.float64), lib.ones(D_LATENT, dtype=lib.float64))
    history = []
    for x in batches:
        x = lib.tensor(x)
        h = lib.tanh(enc1(x))
        mu, log_var = enc2(h).chunk(2, dim=-1)
        posterior = D.Normal(mu, (0.5 * log_var).exp())
        z = posterior.rsample()
        logits = dec2(lib.tanh(dec1(z)))
        likelihood = D.Independent(D.Bernoulli(logits=logits), 1)
        reconstruction = -likelihood.log_prob(x)
        kl = D.kl_divergence(posterior, prior.expand(posterior.batch_shape)).sum(-1)
        loss = (reconstruction + kl).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append((loss.item(), [p.detach().numpy().copy() for p in params]))
    return history


def test_vae_trains_as_in_pytorch(monkeypatch):
    torch_or_skip()                     # patches PyTorch's own modules: needs PyTorch itself
    rng = np.random.default_rng(1)
    steps = 6
    batches = [(rng.random((BATCH, D_IN)) < 0.3).astype(float) for _ in range(steps)]
    noises = [rng.standard_normal((BATCH, D_LATENT)) for _ in range(steps)]
    feed_mg, feed_th = iter(noises), iter(noises)
    monkeypatch.setattr("minigrad.distributions.continuous.standard_normal",
                        lambda shape, dtype, generator=None: mg.tensor(next(feed_mg)))
    monkeypatch.setattr("torch.distributions.normal._standard_normal",
                        lambda shape, dtype, device: torch.tensor(next(feed_th), dtype=dtype))
    weights = vae_weights()
    ours, theirs = vae_program(mg, weights, batches, noises), vae_program(torch, weights, batches, noises)
    for step, ((loss_mg, params_mg), (loss_th, params_th)) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(loss_mg, loss_th, rtol=1e-9, err_msg=f"loss at step {step}")
        for i, (a, b) in enumerate(zip(params_mg, params_th)):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=f"parameter {i} after step {step}")
    assert ours[-1][0] < ours[0][0]          # it learns


N_STATES, N_ACTIONS = 5, 4


def reinforce_program(lib, weights, episodes):
    """REINFORCE: returns (loss, parameters) after each update. ``episodes`` holds (states, actions, rewards)."""
    D = lib.distributions
    hidden, head = (_linear(lib, w, b) for w, b in weights)
    params = list(hidden.parameters()) + list(head.parameters())
    optimizer = lib.optim.SGD(params, lr=0.05, momentum=0.9)
    history = []
    for states, actions, rewards in episodes:
        logits = head(lib.relu(hidden(lib.tensor(states))))
        policy = D.Categorical(logits=logits)
        returns = lib.tensor(np.cumsum(rewards[::-1])[::-1].copy())          # reward-to-go
        advantage = returns - returns.mean()
        log_probs = policy.log_prob(lib.tensor(actions))
        loss = -(log_probs * advantage).mean() - 0.01 * policy.entropy().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append((loss.item(), [p.detach().numpy().copy() for p in params]))
    return history


def test_reinforce_trains_as_in_pytorch():
    rng = np.random.default_rng(2)
    weights = [(rng.standard_normal((10, N_STATES)) * 0.5, rng.standard_normal(10) * 0.1),
               (rng.standard_normal((N_ACTIONS, 10)) * 0.5, rng.standard_normal(N_ACTIONS) * 0.1)]
    episodes = []
    for _ in range(8):
        length = 12
        states = rng.standard_normal((length, N_STATES))
        actions = rng.integers(0, N_ACTIONS, length)          # as a sampler would give them, shared by both
        rewards = (actions == states.argmax(-1) % N_ACTIONS).astype(float)
        episodes.append((states, actions, rewards))
    ours, theirs = reinforce_program(mg, weights, episodes), reinforce_program(torch, weights, episodes)
    for step, ((loss_mg, params_mg), (loss_th, params_th)) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(loss_mg, loss_th, rtol=1e-9, atol=1e-12, err_msg=f"loss at step {step}")
        for i, (a, b) in enumerate(zip(params_mg, params_th)):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=f"parameter {i} after step {step}")


def test_categorical_samples_drive_the_same_update():
    """The actions of the policy come from minigrad's own Categorical.sample (seeded); the update they drive is
    PyTorch's for those actions."""
    rng = np.random.default_rng(3)
    weights = [(rng.standard_normal((10, N_STATES)) * 0.5, np.zeros(10)),
               (rng.standard_normal((N_ACTIONS, 10)) * 0.5, np.zeros(N_ACTIONS))]
    states = rng.standard_normal((16, N_STATES))
    mg.manual_seed(0)
    hidden, head = (_linear(mg, w, b) for w, b in weights)
    with mg.no_grad():
        actions = mg.distributions.Categorical(logits=head(mg.relu(hidden(mg.tensor(states))))).sample().numpy()
    assert actions.dtype == np.int64 and actions.shape == (16,)
    rewards = (actions == 1).astype(float)
    ours = reinforce_program(mg, weights, [(states, actions, rewards)])
    theirs = reinforce_program(torch, weights, [(states, actions, rewards)])
    for a, b in zip(ours[0][1], theirs[0][1]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def sac_actor_loss(lib, mu, log_std, alpha):
    """Soft actor-critic's actor: a tanh-squashed Gaussian (TanhTransform with cache_size=1, as SAC code writes
    it), the log-density of the reparameterised action, a stand-in critic -|a|^2."""
    D = lib.distributions
    policy = D.TransformedDistribution(D.Normal(mu, log_std.exp()), [D.transforms.TanhTransform(cache_size=1)])
    action = policy.rsample()
    log_prob = policy.log_prob(action).sum(-1)
    return (alpha * log_prob + (action ** 2).sum(-1)).mean()


def test_sac_actor_gradients_match_pytorch(monkeypatch):
    torch_or_skip()                     # imports PyTorch's own modules: needs PyTorch itself
    rng = np.random.default_rng(4)
    mu, log_std, eps = rng.standard_normal((6, 2)), 0.3 * rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
    monkeypatch.setattr("minigrad.distributions.continuous.standard_normal",
                        lambda shape, dtype, generator=None: mg.tensor(eps))
    monkeypatch.setattr("torch.distributions.normal._standard_normal",
                        lambda shape, dtype, device: torch.tensor(eps, dtype=dtype))
    results = []
    for lib in (mg, torch):
        params = [lib.tensor(mu, requires_grad=True), lib.tensor(log_std, requires_grad=True)]
        loss = sac_actor_loss(lib, *params, 0.2)
        results.append([loss.detach().numpy()] + [g.numpy() for g in lib.autograd.grad(loss, params)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
