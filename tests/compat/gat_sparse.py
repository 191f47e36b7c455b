"""The sparse graph attention network of pyGAT (``SpGAT``): attention scores on the edges of
``adj.nonzero()``, normalized by a custom autograd Function that builds a sparse COO matrix from the edge
values and multiplies it by a dense matrix, its backward written by hand from ``_indices()``; two heads
concatenated, an output attention layer, NLL, Adam. (pyGAT passes ``torch.Size([N, N])`` as the shape; a
tuple here.)"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS = 3
n_nodes, n_feat, n_hid, n_class, n_heads = 12, 5, 4, 3, 2


class SpecialSpmmFunction(torch.autograd.Function):
    """Special function for only sparse region backpropataion layer."""
    @staticmethod
    def forward(ctx, indices, values, shape, b):
        assert indices.requires_grad == False  # noqa: E712 - as pyGAT writes it
        a = torch.sparse_coo_tensor(indices, values, shape)
        ctx.save_for_backward(a, b)
        ctx.N = shape[0]
        return torch.matmul(a, b)

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_values = grad_b = None
        if ctx.needs_input_grad[1]:
            grad_a_dense = grad_output.matmul(b.t())
            edge_idx = a._indices()[0, :] * ctx.N + a._indices()[1, :]
            grad_values = grad_a_dense.view(-1)[edge_idx]
        if ctx.needs_input_grad[3]:
            grad_b = a.t().matmul(grad_output)
        return None, grad_values, None, grad_b


class SpecialSpmm(nn.Module):
    def forward(self, indices, values, shape, b):
        return SpecialSpmmFunction.apply(indices, values, shape, b)


class SpGraphAttentionLayer(nn.Module):
    def __init__(self, in_features, out_features, dropout, alpha, concat=True):
        super(SpGraphAttentionLayer, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.alpha = alpha
        self.concat = concat
        self.W = nn.Parameter(torch.zeros(size=(in_features, out_features)))
        nn.init.xavier_normal_(self.W.data, gain=1.414)
        self.a = nn.Parameter(torch.zeros(size=(1, 2 * out_features)))
        nn.init.xavier_normal_(self.a.data, gain=1.414)
        self.dropout = nn.Dropout(dropout)
        self.leakyrelu = nn.LeakyReLU(self.alpha)
        self.special_spmm = SpecialSpmm()

    def forward(self, input, adj):
        N = input.size()[0]
        edge = adj.nonzero().t()
        h = torch.mm(input, self.W)
        assert not torch.isnan(h).any()
        edge_h = torch.cat((h[edge[0, :], :], h[edge[1, :], :]), dim=1).t()
        edge_e = torch.exp(-self.leakyrelu(self.a.mm(edge_h).squeeze()))
        assert not torch.isnan(edge_e).any()
        e_rowsum = self.special_spmm(edge, edge_e, (N, N), torch.ones(size=(N, 1), dtype=h.dtype))
        edge_e = self.dropout(edge_e)
        h_prime = self.special_spmm(edge, edge_e, (N, N), h)
        assert not torch.isnan(h_prime).any()
        h_prime = h_prime.div(e_rowsum)
        assert not torch.isnan(h_prime).any()
        if self.concat:
            return F.elu(h_prime)
        else:
            return h_prime


class SpGAT(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout, alpha, nheads):
        super(SpGAT, self).__init__()
        self.dropout = dropout
        self.attentions = [SpGraphAttentionLayer(nfeat, nhid, dropout=dropout, alpha=alpha, concat=True)
                           for _ in range(nheads)]
        for i, attention in enumerate(self.attentions):
            self.add_module('attention_{}'.format(i), attention)
        self.out_att = SpGraphAttentionLayer(nhid * nheads, nclass, dropout=dropout, alpha=alpha, concat=False)

    def forward(self, x, adj):
        x = F.dropout(x, self.dropout, training=self.training)
        x = torch.cat([att(x, adj) for att in self.attentions], dim=1)
        x = F.dropout(x, self.dropout, training=self.training)
        x = F.elu(self.out_att(x, adj))
        return F.log_softmax(x, dim=1)


def make_model():
    return SpGAT(nfeat=n_feat, nhid=n_hid, nclass=n_class, dropout=0.6, alpha=0.2, nheads=n_heads)


def make_data(rng):
    adj = (rng.random((n_nodes, n_nodes)) < 0.25).astype(np.float64)
    adj = np.maximum(adj, adj.T) + np.eye(n_nodes)
    return {"adj": adj, "features": rng.standard_normal((n_nodes, n_feat)),
            "labels": rng.integers(0, n_class, n_nodes)}


def train(model, data, steps, after_backward=None):
    adj, features = torch.tensor(data["adj"]), torch.tensor(data["features"])
    labels, idx_train = torch.tensor(data["labels"]), torch.arange(8)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.005, weight_decay=5e-4)
    model.eval()   # dropout off, so that both libraries compute the same function
    losses = []
    for epoch in range(steps):
        optimizer.zero_grad()
        output = model(features, adj)
        loss_train = F.nll_loss(output[idx_train], labels[idx_train])
        loss_train.backward()
        if after_backward is not None:
            after_backward(epoch)
        optimizer.step()
        losses.append(loss_train.item())
    return losses
